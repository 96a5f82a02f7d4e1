//! The in-page search engine: the wasm build of recall-core (`pkg/`) holding a
//! manifest and its generation files. Search, the session list, the session
//! view and lineage are the core's own (`viewsJson`), so offline mode and the
//! report viewer answer with the daemon's bytes. Used inside the dashboard's
//! Web Worker and directly by the report viewer.

import init, { Index } from '../pkg/recall_core.js';

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
  }

  /** Whether a generation is loaded. */
  hasGeneration(name) {
    return this.index.hasGeneration(name);
  }

  /** §4 search: a request object in, the response (or §7 error body) out. */
  search(request) {
    return JSON.parse(this.index.searchJson(JSON.stringify(clean(request))));
  }

  /** A view query of the core (`MemIndex::views_json`): the response object or the §7 error body. */
  views(request) {
    return JSON.parse(this.index.viewsJson(JSON.stringify(request)));
  }

  /** `GET /api/sessions` from the core: the list, filtered and paged. */
  sessions(params = {}) {
    return this.views({ query: 'sessions', params: clean(params) });
  }

  /** A page of a session's entries, as `GET /api/session/{key}` answers. */
  session(key, { offset, limit, locate, scope } = {}) {
    const params = clean({ offset, limit, scope, locate: typeof locate === 'object' && locate ? JSON.stringify(locate) : locate });
    const res = this.views({ query: 'session', key, params });
    if (res.ok === false && res.error === 'session_not_found') res.message = 'This session is not in the offline index.';
    return res;
  }

  /** Lineage, as `/api/session/{key}/trace` answers. */
  trace(key) {
    return this.views({ query: 'trace', key });
  }

  /** A one-session query (filter, search, window, surface, classify, event_trace) over `key`'s shard. */
  sessionQuery(key, request) {
    const entry = this.manifest.sessions?.[key];
    if (!entry) return { ok: false, error: 'session_not_found', message: 'This session is not in the offline index.' };
    return JSON.parse(this.index.sessionQueryJson(entry.generation_file, JSON.stringify(request)));
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
