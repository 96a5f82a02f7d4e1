//! The in-page search engine: the wasm build of recall-core (`pkg/`) holding a
//! manifest and its generation files. Search, the session list, the session
//! view and lineage are the core's own (`viewsJson`), so offline mode and the
//! report viewer answer with the daemon's bytes. Made with `Engine.fromDaemon`
//! or `Engine.fromBucket`, the core fetches by itself (web-sys `fetch`, kept
//! in the Cache API): `sync` downloads the manifest and the index segments,
//! `searchFetching` the generations a search needs. Used inside the
//! dashboard's Web Worker and directly by the report viewer.

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
  constructor(index = new Index()) {
    this.index = index;
    this.manifest = { sessions: {}, revision: 0 };
  }

  /** An engine whose core fetches from the daemon at `origin`. */
  static fromDaemon(origin) {
    return new Engine(Index.fromDaemon(origin));
  }

  /** An engine whose core fetches from a team bucket's host folder (`…/hosts/<id>/`). */
  static fromBucket(folder) {
    return new Engine(Index.fromBucket(folder));
  }

  /**
   * Downloads the manifest and the segments the cache lacks (the core does
   * the fetching); `onProgress({done, total, bytes})`. Resolves to
   * `{store_id, revision, sessions, segments, fetched, bytes, lazy, fetched_ms}`.
   */
  sync(onProgress) {
    return this.index.sync(onProgress || null);
  }

  /** Opens the copy in the cache without the network; resolves to `sync`'s summary. */
  load() {
    return this.index.load();
  }

  /** Fetches every generation not yet loaded; resolves to how many came from the network. */
  fill() {
    return this.index.fill();
  }

  /** How many generations the cache holds for this engine's source. */
  cachedGenerations() {
    return this.index.cachedGenerations();
  }

  /** `{revision, fetched_ms}` of the cached copy, or null. */
  stored() {
    return this.index.stored();
  }

  /** Deletes the cached copy. */
  forget() {
    return this.index.forget();
  }

  /**
   * §4 search before every generation is loaded: the core fetches (and
   * caches) the generations its scan reaches, a few at a time, and answers
   * as `search` over a fully loaded index would; budget clock performance.now().
   */
  searchFetching(request) {
    return this.index.searchFetching(clean(request));
  }

  /** Loads generations `names` (cache, then the source) before a view that reads them. */
  ensure(names) {
    return this.index.ensureGenerations(names);
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

  /** The generation file of session `key` (exact key), or null. */
  generationOf(key) {
    return this.index.generationOf(key) ?? null;
  }

  /** §4 search: a request object in, the response (or §7 error body) out; budget clock performance.now(). */
  search(request) {
    return this.index.search(clean(request));
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
    const name = this.generationOf(key);
    if (!name) return { ok: false, error: 'session_not_found', message: 'This session is not in the offline index.' };
    return JSON.parse(this.index.sessionQueryJson(name, JSON.stringify(request)));
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
