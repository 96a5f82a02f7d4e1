//! The offline search worker: holds the wasm core and the offline copy of the
//! index (read from IndexedDB), so searching in the page never blocks typing.
//! With index segments the copy starts without generations: a search loads
//! the ones it needs (`Engine.searchLazy`) from IndexedDB, else from the
//! daemon, and keeps what it fetched.
//!
//! Messages in: `{id, op, args}` with `op` one of `open`, `search`,
//! `session`, `trace`, `sessions`, `sessionQuery`. Replies:
//! `{id, ok: true, result}` or `{id, ok: false, error}`.

import { Engine, loadWasm } from './engine.js';
import * as idb from './idb.js';

let engine = null;

/** A generation's bytes: the offline copy's, else the daemon's (then kept). */
async function loadGeneration(name) {
  const cached = await idb.get('generations', name);
  if (cached) return cached;
  const r = await fetch(`/api/index/generations/${encodeURIComponent(name)}`);
  if (!r.ok) throw new Error(`The daemon did not serve ${name}.`);
  const bytes = new Uint8Array(await r.arrayBuffer());
  await idb.put('generations', name, bytes).catch(() => {});
  return bytes;
}

async function openIndex() {
  await loadWasm(new URL('../pkg/recall_core_bg.wasm', import.meta.url));
  const meta = await idb.get('meta', 'manifest');
  if (!meta) throw new Error('No offline copy has been downloaded.');
  const next = new Engine();
  const manifest = JSON.parse(new TextDecoder().decode(meta.bytes));
  const segments = meta.segments || [];
  for (const name of segments) {
    const bytes = await idb.get('segments', name);
    if (!bytes) throw new Error(`The offline copy is missing ${name}; download it again.`);
    next.addSegment(name, bytes);
  }
  if (!segments.length) {
    // A copy without segments holds every generation: load them all.
    for (const entry of Object.values(manifest.sessions || {})) {
      const name = entry.generation_file;
      if (next.hasGeneration(name)) continue;
      const bytes = await idb.get('generations', name);
      if (!bytes) throw new Error(`The offline copy is missing ${name}; download it again.`);
      next.addGeneration(name, bytes);
    }
  }
  next.setManifest(meta.bytes);
  engine = next;
  return { revision: manifest.revision, store_id: manifest.store_id, sessions: Object.keys(manifest.sessions || {}).length, fetched_ms: meta.fetched_ms, lazy: segments.length > 0 };
}

/** Loads session `key`'s generation before a view that reads it. */
async function withShard(key) {
  const name = engine.generationOf(key);
  if (name) await engine.ensure([name], loadGeneration);
}

const ops = {
  open: () => openIndex(),
  search: (request) => engine.searchLazy(request, loadGeneration),
  session: async (key, options) => (await withShard(key), engine.session(key, options)),
  trace: (key) => engine.trace(key),
  sessions: (params) => engine.sessions(params),
  sessionQuery: async (key, request) => (await withShard(key), engine.sessionQuery(key, request)),
};

self.onmessage = async (event) => {
  const { id, op, args } = event.data || {};
  try {
    if (op !== 'open' && !engine) throw new Error('The offline index is not open.');
    const fn = ops[op];
    if (!fn) throw new Error(`unknown op ${op}`);
    const result = await fn(...(args || []));
    self.postMessage({ id, ok: true, result });
  } catch (e) {
    self.postMessage({ id, ok: false, error: String(e?.message || e) });
  }
};
