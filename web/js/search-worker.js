//! The offline search worker: holds the wasm core, which fetches the index by
//! itself (web-sys `fetch`) from the daemon that served the page and keeps
//! what it fetched in the Cache API, so searching in the page never blocks
//! typing and a reload works without the daemon. `sync` downloads the
//! manifest and the segments; a search fetches just the generations it needs.
//!
//! Messages in: `{id, op, args}` with `op` one of `sync`, `open`, `search`,
//! `session`, `trace`, `sessions`, `sessionQuery`, `fill`,
//! `cachedGenerations`, `stored`, `forget`. Replies: `{id, progress}` while
//! a `sync` runs, then `{id, ok: true, result}` or `{id, ok: false, error}`.

import { Engine, loadWasm } from './engine.js';

let engine = null;
/** The summary of the copy the engine holds (null: nothing opened yet). */
let opened = null;

async function source() {
  await loadWasm(new URL('../pkg/recall_core_bg.wasm', import.meta.url));
  if (!engine) engine = Engine.fromDaemon(self.location.origin);
  return engine;
}

function summary(s) {
  return { revision: s.revision, store_id: s.store_id, sessions: s.sessions, fetched_ms: s.fetched_ms, lazy: s.lazy, fetched: s.fetched, bytes: s.bytes };
}

/** Loads session `key`'s generation before a view that reads it. */
async function withShard(key) {
  const name = engine.generationOf(key);
  if (name) await engine.ensure([name]);
}

function needOpen() {
  if (!opened) throw new Error('The offline index is not open.');
}

const ops = {
  sync: async (id) => {
    const e = await source();
    opened = summary(await e.sync((p) => self.postMessage({ id, progress: p })));
    return opened;
  },
  open: async () => {
    const e = await source();
    if (!opened) opened = summary(await e.load());
    return opened;
  },
  search: (request) => (needOpen(), engine.searchFetching(request)),
  session: async (key, options) => (needOpen(), await withShard(key), engine.session(key, options)),
  trace: (key) => (needOpen(), engine.trace(key)),
  sessions: (params) => (needOpen(), engine.sessions(params)),
  sessionQuery: async (key, request) => (needOpen(), await withShard(key), engine.sessionQuery(key, request)),
  fill: async () => (needOpen(), { fetched: await engine.fill() }),
  cachedGenerations: async () => (await source()).cachedGenerations(),
  stored: async () => (await source()).stored(),
  forget: async () => {
    await (await source()).forget();
    opened = null;
  },
};

self.onmessage = async (event) => {
  const { id, op, args } = event.data || {};
  try {
    const fn = ops[op];
    if (!fn) throw new Error(`unknown op ${op}`);
    const result = await (op === 'sync' ? fn(id) : fn(...(args || [])));
    self.postMessage({ id, ok: true, result });
  } catch (e) {
    self.postMessage({ id, ok: false, error: String(e?.message || e) });
  }
};
