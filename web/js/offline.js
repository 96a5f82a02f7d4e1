//! Offline mode: downloads the daemon's manifest and generation files into
//! IndexedDB (with progress), and searches them with the wasm core inside a
//! Web Worker. `offline` has the same interface as `api.online`.

import * as idb from './idb.js';
import { ApiError } from './api.js';

const PARALLEL = 4;

/**
 * Downloads the current manifest and every generation the offline copy lacks;
 * drops generations no longer referenced. `onProgress({done, total, bytes})`
 * is called as files arrive. Resolves to `{revision, sessions, fetched, bytes}`.
 */
export async function download(onProgress = () => {}, { signal } = {}) {
  const res = await fetch('/api/index/manifest', { signal, cache: 'no-store' });
  if (!res.ok) throw new ApiError(res.status, 'manifest_unavailable', 'The daemon did not serve its manifest.');
  const manifestBytes = new Uint8Array(await res.arrayBuffer());
  const manifest = JSON.parse(new TextDecoder().decode(manifestBytes));
  const wanted = [...new Set(Object.values(manifest.sessions || {}).map((e) => e.generation_file))];
  const have = new Set(await idb.keys('generations'));
  const missing = wanted.filter((n) => !have.has(n));
  let done = wanted.length - missing.length;
  let bytes = 0;
  onProgress({ done, total: wanted.length, bytes });
  const queue = missing.slice();
  const worker = async () => {
    while (queue.length) {
      const name = queue.shift();
      const r = await fetch(`/api/index/generations/${encodeURIComponent(name)}`, { signal });
      if (!r.ok) throw new ApiError(r.status, 'generation_unavailable', `The daemon did not serve ${name}.`);
      const body = new Uint8Array(await r.arrayBuffer());
      await idb.put('generations', name, body);
      done += 1;
      bytes += body.length;
      onProgress({ done, total: wanted.length, bytes });
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  const keep = new Set(wanted);
  await idb.remove('generations', [...have].filter((n) => !keep.has(n)));
  await idb.put('meta', 'manifest', { bytes: manifestBytes, revision: manifest.revision, fetched_ms: Date.now() });
  return { revision: manifest.revision, sessions: Object.keys(manifest.sessions || {}).length, fetched: missing.length, bytes };
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
