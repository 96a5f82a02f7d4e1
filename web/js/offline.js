//! Offline mode: the wasm core, in a Web Worker, downloads the daemon's
//! manifest and index segments by itself (web-sys `fetch`, kept in the Cache
//! API) and searches them, fetching and caching just the generation files a
//! search needs (`Index.searchFetching`); the rest are then filled in in the
//! background, so the copy ends up complete for use without the daemon. A
//! daemon that serves no segments gets a copy whose searches fetch every
//! generation they scan. `offline` has the same interface as `api.online`.

import { ApiError } from './api.js';

/**
 * Downloads the current manifest and the index segments the offline copy
 * lacks; drops cached files no longer referenced. `onProgress({done, total,
 * bytes})` is called as segments arrive. Generations are fetched by the
 * searches that need them and then by a background fill (`fill: false`
 * skips it; `filled()` resolves when it ends). Resolves to `{revision,
 * sessions, fetched, bytes, lazy}`.
 */
export async function download(onProgress = () => {}, { fill: autoFill = true } = {}) {
  let r;
  try {
    r = await call('sync', { onProgress });
  } catch (e) {
    throw new ApiError(0, 'download_failed', e.message);
  }
  if (autoFill) fill();
  return { revision: r.revision, sessions: r.sessions, fetched: r.fetched, bytes: r.bytes, lazy: r.lazy };
}

let filling = Promise.resolve({ fetched: 0 });

/**
 * Fetches every generation the copy's manifest names that it lacks (what no
 * search has needed yet), so the copy works without the daemon. Resolves to
 * `{fetched}`; a failure leaves the rest to the searches.
 */
export function fill() {
  filling = ready().then(() => call('fill')).catch(() => ({ fetched: 0, failed: true }));
  return filling;
}

/** Resolves when the last background fill ends. */
export function filled() {
  return filling;
}

/** How many generation files the offline copy holds. */
export function cachedGenerations() {
  return call('cachedGenerations');
}

/** What the offline copy holds: `{revision, fetched_ms}` or null. */
export async function stored() {
  try {
    return await call('stored');
  } catch {
    return null;
  }
}

/** Deletes the offline copy. */
export async function forget() {
  await call('forget');
  worker.terminate();
  worker = null;
  opened = null;
}

let worker = null;
let opened = null;
let nextId = 1;
const pending = new Map();

/** Runs `op` in the worker; `onProgress` (sync) gets its progress messages. */
function call(op, ...args) {
  const onProgress = op === 'sync' ? args.shift()?.onProgress : null;
  if (!worker) {
    worker = new Worker(new URL('./search-worker.js', import.meta.url), { type: 'module' });
    worker.onmessage = (event) => {
      const { id, ok, result, error, progress } = event.data;
      const p = pending.get(id);
      if (!p) return;
      if (progress) {
        p.onProgress?.(progress);
        return;
      }
      pending.delete(id);
      if (ok) p.resolve(result);
      else p.reject(new ApiError(0, 'offline', error));
    };
    worker.onerror = (event) => {
      for (const p of pending.values()) p.reject(new ApiError(0, 'offline', event.message || 'offline worker failed'));
      pending.clear();
    };
  }
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject, onProgress });
    worker.postMessage({ id, op, args });
  });
}

/** (Re)loads the offline copy into the worker. Resolves to its summary. */
export function open() {
  opened = call('open');
  opened.catch(() => { opened = null; });
  return opened;
}

async function ready() {
  if (!opened) open();
  return opened;
}

function unwrap(body) {
  if (body && body.ok === false) throw new ApiError(400, body.error, body.message, body.at);
  return body;
}

function abortable(promise, signal) {
  if (!signal) return promise;
  return new Promise((resolve, reject) => {
    if (signal.aborted) reject(new DOMException('aborted', 'AbortError'));
    signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')), { once: true });
    promise.then(resolve, reject);
  });
}

/** The offline backend: the same calls as `online`, answered in the page. */
export const offline = {
  kind: 'offline',
  async search(request, signal) {
    await ready();
    return unwrap(await abortable(call('search', request), signal));
  },
  async session(key, options = {}, signal) {
    await ready();
    return unwrap(await abortable(call('session', key, options), signal));
  },
  async trace(key, signal) {
    await ready();
    return unwrap(await abortable(call('trace', key), signal));
  },
  async sessions(params = {}, signal) {
    await ready();
    return unwrap(await abortable(call('sessions', params), signal));
  },
  async sessionQuery(key, request, signal) {
    await ready();
    return unwrap(await abortable(call('sessionQuery', key, request), signal));
  },
  async status() {
    const info = await ready();
    return { phase: 'offline', revision: info.revision, sessions: info.sessions, fetched_ms: info.fetched_ms };
  },
};
