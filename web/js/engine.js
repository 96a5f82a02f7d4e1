//! The in-page search engine: the wasm build of recall-core (`pkg/`) holding a
//! manifest and its generation files, plus the session views that offline
//! mode and the report viewer build from the shards themselves. Used inside
//! the dashboard's Web Worker and directly by the report viewer.

import init, { Index } from '../pkg/recall_core.js';
import { sessionSummary, pageEntries, traceOf } from './shards.js';

let ready = null;

/** Loads the wasm module once. `source` is a URL, bytes or a compiled module. */
export function loadWasm(source) {
  if (!ready) ready = init(source === undefined ? undefined : { module_or_path: source });
  return ready;
}

const decoder = new TextDecoder();

/** A manifest and its shards, searchable with the same core as the daemon. */
export class Engine {
  constructor() {
    this.index = new Index();
    this.manifest = { sessions: {}, revision: 0 };
    /** generation file name → bytes (parsed lazily for session views). */
    this.bytes = new Map();
    this.parsed = new Map();
  }

  /** Replaces the manifest (its exact bytes). */
  setManifest(bytes) {
    this.index.setManifest(bytes);
    this.manifest = JSON.parse(decoder.decode(bytes));
  }

  /** Adds a generation file; the core checks that `name` hashes `bytes`. */
  addGeneration(name, bytes) {
    if (this.index.hasGeneration(name)) return;
    this.index.addGeneration(name, bytes);
    this.bytes.set(name, bytes);
  }

  /** Whether a generation is loaded. */
  hasGeneration(name) {
    return this.index.hasGeneration(name);
  }

  /** §4 search: a request object in, the response (or §7 error body) out. */
  search(request) {
    return JSON.parse(this.index.searchJson(JSON.stringify(clean(request))));
  }

  /** The parsed shard of a session, or null. */
  shard(key) {
    const entry = this.manifest.sessions?.[key];
    if (!entry) return null;
    const name = entry.generation_file;
    if (!this.parsed.has(name)) {
      const bytes = this.bytes.get(name);
      if (!bytes) return null;
      this.parsed.set(name, JSON.parse(decoder.decode(bytes)));
    }
    return this.parsed.get(name);
  }

  /** A page of a session's entries, shaped like `GET /api/session/{key}`. */
  session(key, { offset, limit, locate, scope } = {}) {
    const entry = this.manifest.sessions?.[key];
    const shard = this.shard(key);
    if (!entry || !shard) {
      return { ok: false, error: 'session_not_found', message: 'This session is not in the offline index.' };
    }
    const superseded = typeof this.index.supersededRecords === 'function'
      ? new Set(this.index.supersededRecords(entry.generation_file))
      : null;
    return {
      ok: true,
      session: sessionSummary(key, entry),
      ...pageEntries(shard, { offset, limit, locate, scope, superseded }),
    };
  }

  /** Lineage from the manifest's parent links, shaped like `/trace`. */
  trace(key) {
    return traceOf(this.manifest, key);
  }
}

function clean(request) {
  const out = {};
  for (const [k, v] of Object.entries(request || {})) {
    if (v === undefined || v === null || v === '') continue;
    out[k] = v;
  }
  return out;
}
