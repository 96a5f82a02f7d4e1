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

  /** Adds one of the store's index segments; the core checks that `name` hashes `bytes`. */
  addSegment(name, bytes) {
    if (this.index.hasSegment(name)) return;
    this.index.addSegment(name, bytes);
  }

  /**
   * Loads the generations `names` through `load(name) → Promise<bytes>`
   * (in parallel); one that cannot be fetched or is refused is marked
   * unavailable, so a lazy search skips it (`partial`/`unreadable`) instead
   * of asking again.
   */
  async ensure(names, load) {
    const want = [...new Set(names)].filter((n) => !this.index.hasGeneration(n));
    const got = await Promise.all(want.map((n) => load(n).then((b) => [n, b], () => [n, null])));
    for (const [n, bytes] of got) {
      try {
        if (!bytes) throw new Error('unavailable');
        this.index.addGeneration(n, bytes);
      } catch {
        this.index.markUnavailable(n);
      }
    }
  }

  /**
   * §4 search before every generation is loaded: the core answers, or names
   * the generations its scan reached that are not loaded (in scan order, at
   * most `maxNeed`); they are loaded with `load` and the core is asked
   * again. The answer equals `search` over a fully loaded index.
   */
  async searchLazy(request, load, { maxNeed = 16 } = {}) {
    const json = JSON.stringify(clean(request));
    for (;;) {
      const body = JSON.parse(this.index.searchLazyJson(json, maxNeed));
      if (!Array.isArray(body.need)) return body;
      await this.ensure(body.need, load);
    }
  }

  /** The generation file of session `key` (exact key), or null. */
  generationOf(key) {
    return this.manifest.sessions?.[key]?.generation_file ?? null;
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
