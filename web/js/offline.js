//! Offline mode: downloads the daemon's manifest and index segments into
//! IndexedDB (with progress) and searches them with the wasm core inside a
//! Web Worker, which fetches the generation files a search needs as it needs
//! them (`Engine.searchLazy`) and keeps them; the rest are then filled in in
//! the background, so the copy ends up complete for use without the daemon.
//! A daemon that serves no segments gets the old full download. `offline` has
//! the same interface as `api.online`.

import * as idb from './idb.js';
import { ApiError } from './api.js';

const PARALLEL = 4;

async function fetchBytes(path, what, signal) {
  const r = await fetch(path, { signal });
  if (!r.ok) throw new ApiError(r.status, `${what}_unavailable`, `The daemon did not serve ${path}.`);
  return new Uint8Array(await r.arrayBuffer());
}

/** Fetches `names` the store `store` lacks from `base`, `PARALLEL` at a time. */
async function fetchInto(store, base, names, what, { signal, onFile = () => {} } = {}) {
  const queue = names.slice();
  const worker = async () => {
    while (queue.length) {
      const name = queue.shift();
      const body = await fetchBytes(`${base}/${encodeURIComponent(name)}`, what, signal);
      await idb.put(store, name, body);
      onFile(body.length);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
}

/** The live segment names, or null when the daemon serves none for this store. */
async function liveSegments(storeId, signal) {
  try {
    const r = await fetch('/api/index/segments', { signal, cache: 'no-store' });
    if (!r.ok) return null;
    const list = await r.json();
    if (list.store_id !== storeId || !Array.isArray(list.segments) || !list.segments.length) return null;
    return list.segments.map((s) => s.name);
  } catch (e) {
    if (e?.name === 'AbortError') throw e;
    return null;
  }
}

/**
 * Downloads the current manifest and the index segments the offline copy
 * lacks (or, from a daemon without segments, every generation); drops files
 * no longer referenced. `onProgress({done, total, bytes})` is called as files
 * arrive. With segments, generations are fetched by the searches that need
 * them and then by a background fill (`fill: false` skips it; `filled()`
 * resolves when it ends). Resolves to `{revision, sessions, fetched, bytes, lazy}`.
 */
export async function download(onProgress = () => {}, { signal, fill: autoFill = true } = {}) {
  const res = await fetch('/api/index/manifest', { signal, cache: 'no-store' });
  if (!res.ok) throw new ApiError(res.status, 'manifest_unavailable', 'The daemon did not serve its manifest.');
  const manifestBytes = new Uint8Array(await res.arrayBuffer());
  const manifest = JSON.parse(new TextDecoder().decode(manifestBytes));
  const wanted = [...new Set(Object.values(manifest.sessions || {}).map((e) => e.generation_file))];
  const segments = await liveSegments(manifest.store_id, signal);
  const haveGens = new Set(await idb.keys('generations'));
  const haveSegs = new Set(await idb.keys('segments'));
  const files = segments || wanted;
  const have = segments ? haveSegs : haveGens;
  const missing = files.filter((n) => !have.has(n));
  let done = files.length - missing.length;
  let bytes = 0;
  onProgress({ done, total: files.length, bytes });
  const onFile = (n) => {
    done += 1;
    bytes += n;
    onProgress({ done, total: files.length, bytes });
  };
  if (segments) await fetchInto('segments', '/api/index/segments', missing, 'segment', { signal, onFile });
  else await fetchInto('generations', '/api/index/generations', missing, 'generation', { signal, onFile });
  const keepGens = new Set(wanted);
  await idb.remove('generations', [...haveGens].filter((n) => !keepGens.has(n)));
  const keepSegs = new Set(segments || []);
  await idb.remove('segments', [...haveSegs].filter((n) => !keepSegs.has(n)));
  await idb.put('meta', 'manifest', {
    bytes: manifestBytes,
    revision: manifest.revision,
    segments: segments || [],
    fetched_ms: Date.now(),
  });
  if (segments && autoFill) fill({ signal });
  return { revision: manifest.revision, sessions: Object.keys(manifest.sessions || {}).length, fetched: missing.length, bytes, lazy: !!segments };
}

let filling = Promise.resolve({ fetched: 0 });

/**
 * Fetches every generation the stored manifest names that the copy lacks
 * (what no search has needed yet), so the copy works without the daemon.
 * Resolves to `{fetched}`; a failure leaves the rest to the searches.
 */
export function fill({ signal } = {}) {
  filling = (async () => {
    const meta = await idb.get('meta', 'manifest');
    if (!meta) return { fetched: 0 };
    const manifest = JSON.parse(new TextDecoder().decode(meta.bytes));
    const have = new Set(await idb.keys('generations'));
    const wanted = [...new Set(Object.values(manifest.sessions || {}).map((e) => e.generation_file))];
    const missing = wanted.filter((n) => !have.has(n));
    let fetched = 0;
    await fetchInto('generations', '/api/index/generations', missing, 'generation', { signal, onFile: () => { fetched += 1; } });
    return { fetched };
  })().catch(() => ({ fetched: 0, failed: true }));
  return filling;
}

/** Resolves when the last background fill ends. */
export function filled() {
  return filling;
}

/** How many generation files the offline copy holds. */
export async function cachedGenerations() {
  return (await idb.keys('generations')).length;
}

/** What the offline copy holds: `{revision, fetched_ms}` or null. */
export async function stored() {
  try {
    const meta = await idb.get('meta', 'manifest');
    return meta ? { revision: meta.revision, fetched_ms: meta.fetched_ms } : null;
  } catch {
    return null;
  }
}

/** Deletes the offline copy. */
export async function forget() {
  await idb.clearAll();
  if (worker) {
    worker.terminate();
    worker = null;
    opened = null;
  }
}

let worker = null;
let opened = null;
let nextId = 1;
const pending = new Map();

function call(op, ...args) {
  if (!worker) {
    worker = new Worker(new URL('./search-worker.js', import.meta.url), { type: 'module' });
    worker.onmessage = (event) => {
      const { id, ok, result, error } = event.data;
      const p = pending.get(id);
      if (!p) return;
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
    pending.set(id, { resolve, reject });
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
  if (body && body.ok === false) throw new ApiError(400, body.error, body.message);
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
