//! The offline search worker: holds the wasm core and the offline copy of the
//! index (read from IndexedDB), so searching in the page never blocks typing.
//!
//! Messages in: `{id, op, args}` with `op` one of `open`, `search`,
//! `session`, `trace`. Replies: `{id, ok: true, result}` or
//! `{id, ok: false, error}`.

import { Engine, loadWasm } from './engine.js';
import * as idb from './idb.js';

let engine = null;

async function openIndex() {
  await loadWasm(new URL('../pkg/recall_core_bg.wasm', import.meta.url));
  const meta = await idb.get('meta', 'manifest');
  if (!meta) throw new Error('No offline copy has been downloaded.');
  const next = new Engine();
  const manifest = JSON.parse(new TextDecoder().decode(meta.bytes));
  for (const entry of Object.values(manifest.sessions || {})) {
    const name = entry.generation_file;
    if (next.hasGeneration(name)) continue;
    const bytes = await idb.get('generations', name);
    if (!bytes) throw new Error(`The offline copy is missing ${name}; download it again.`);
    next.addGeneration(name, bytes);
  }
  next.setManifest(meta.bytes);
  engine = next;
  return { revision: manifest.revision, store_id: manifest.store_id, sessions: Object.keys(manifest.sessions || {}).length, fetched_ms: meta.fetched_ms };
}

const ops = {
  open: () => openIndex(),
  search: (request) => engine.search(request),
  session: (key, options) => engine.session(key, options),
  trace: (key) => engine.trace(key),
  sessions: (params) => engine.sessions(params),
  sessionQuery: (key, request) => engine.sessionQuery(key, request),
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
