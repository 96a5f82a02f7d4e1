/* tslint:disable */
/* eslint-disable */

/**
 * The browser's index object: a manifest and its generations in memory,
 * and (when made with `fromDaemon`/`fromBucket`) where to fetch them.
 */
export class Index {
    free(): void;
    [Symbol.dispose](): void;
    /**
     * Adds a generation file; `name` must be `<hash16>.json` of `bytes`.
     */
    addGeneration(name: string, bytes: Uint8Array | number[]): void;
    /**
     * Adds a store segment; `name` must be `<hash16>.seg` of `bytes`.
     */
    addSegment(name: string, bytes: Uint8Array | number[]): void;
    /**
     * How many of the source's generations the cache holds.
     */
    cachedGenerations(): Promise<any>;
    /**
     * Loads `names` (cache, then network) before a view that reads them.
     */
    ensureGenerations(names: string[]): Promise<any>;
    /**
     * Fetches every generation the manifest names that is not loaded, so
     * the copy answers without the source. Resolves to how many came from
     * the network.
     */
    fill(): Promise<any>;
    /**
     * Deletes the source's files from the cache and empties this index.
     */
    forget(): Promise<any>;
    /**
     * An empty index that fetches from a team bucket's host folder
     * (`https://…/<prefix>/hosts/<host-id>/`, readable by the page: CORS).
     */
    static fromBucket(folder: string): Index;
    /**
     * An empty index that fetches from the daemon at `origin`
     * (`location.origin`).
     */
    static fromDaemon(origin: string): Index;
    /**
     * The generation file of session `key` in the current manifest.
     */
    generationOf(key: string): string | undefined;
    /**
     * Whether a generation is loaded.
     */
    hasGeneration(name: string): boolean;
    /**
     * Whether a segment was added under `name`.
     */
    hasSegment(name: string): boolean;
    /**
     * Replaces this index with the copy in the cache (no network).
     * Resolves to the summary `sync` gave (`fetched: 0`).
     */
    load(): Promise<any>;
    /**
     * An empty index.
     */
    constructor();
    /**
     * §4 search that fetches what it needs: resolves to the response (or
     * the §7 error body), equal to `search` over a fully loaded index.
     * Generations that cannot be fetched are left out (`partial`).
     */
    searchFetching(request: any): Promise<any>;
    /**
     * JSON in, JSON out: exactly the bytes `MemIndex::search_json` returns
     * natively.
     */
    searchJson(request_json: string): string;
    /**
     * Searches: a request object in, the §4 response (or the §7 error body
     * `{ok:false, error, message}`, exactly as `searchJson` gives it) out,
     * as plain JS objects.
     */
    search(request: any): any;
    /**
     * A one-session query (filter, search, window, surface, classify,
     * event_trace) over loaded generation `name`: exactly
     * `MemIndex::session_query_json`'s bytes.
     */
    sessionQueryJson(name: string, request_json: string): string;
    /**
     * Replaces the manifest (`manifest.json` bytes).
     */
    setManifest(bytes: Uint8Array | number[]): void;
    /**
     * What the cache holds for the source: `{revision, fetched_ms}` or null.
     */
    stored(): Promise<any>;
    /**
     * Downloads the manifest and the segments the cache lacks (kept in
     * the Cache API) and replaces this index with the new copy;
     * `onProgress({done, total, bytes})` as segments arrive. Resolves to
     * `{store_id, revision, sessions, segments, fetched, bytes, lazy,
     * fetched_ms}`; rejects (keeping the old copy) on any failure.
     */
    sync(on_progress?: Function | null): Promise<any>;
    /**
     * `MemIndex::views_json`'s bytes: the session list, a session view or
     * lineage, shaped like the daemon's routes.
     */
    viewsJson(request_json: string): string;
}

export type InitInput = RequestInfo | URL | Response | BufferSource | WebAssembly.Module;

export interface InitOutput {
    readonly memory: WebAssembly.Memory;
    readonly __wbg_index_free: (a: number, b: number) => void;
    readonly index_addGeneration: (a: number, b: number, c: number, d: number, e: number) => [number, number];
    readonly index_addSegment: (a: number, b: number, c: number, d: number, e: number) => [number, number];
    readonly index_cachedGenerations: (a: number) => any;
    readonly index_ensureGenerations: (a: number, b: number, c: number) => any;
    readonly index_fill: (a: number) => any;
    readonly index_forget: (a: number) => any;
    readonly index_fromBucket: (a: number, b: number) => number;
    readonly index_fromDaemon: (a: number, b: number) => number;
    readonly index_generationOf: (a: number, b: number, c: number) => [number, number];
    readonly index_hasGeneration: (a: number, b: number, c: number) => number;
    readonly index_hasSegment: (a: number, b: number, c: number) => number;
    readonly index_load: (a: number) => any;
    readonly index_new: () => number;
    readonly index_search: (a: number, b: any) => [number, number, number];
    readonly index_searchFetching: (a: number, b: any) => any;
    readonly index_searchJson: (a: number, b: number, c: number) => [number, number];
    readonly index_sessionQueryJson: (a: number, b: number, c: number, d: number, e: number) => [number, number];
    readonly index_setManifest: (a: number, b: number, c: number) => [number, number];
    readonly index_stored: (a: number) => any;
    readonly index_sync: (a: number, b: number) => any;
    readonly index_viewsJson: (a: number, b: number, c: number) => [number, number];
    readonly recall_add_generation: (a: number, b: number, c: number, d: number, e: number) => number;
    readonly recall_add_segment: (a: number, b: number, c: number, d: number, e: number) => number;
    readonly recall_alloc: (a: number) => number;
    readonly recall_free: (a: number, b: number) => void;
    readonly recall_index_free: (a: number) => void;
    readonly recall_index_new: () => number;
    readonly recall_last_error: () => bigint;
    readonly recall_search: (a: number, b: number, c: number) => bigint;
    readonly recall_search_lazy: (a: number, b: number, c: number, d: number) => bigint;
    readonly recall_session_query: (a: number, b: number, c: number, d: number, e: number) => bigint;
    readonly recall_set_manifest: (a: number, b: number, c: number) => number;
    readonly recall_views: (a: number, b: number, c: number) => bigint;
    readonly wasm_bindgen__convert__closures_____invoke__h1c612c98c350231b: (a: number, b: number, c: any, d: any) => void;
    readonly wasm_bindgen__convert__closures_____invoke__h576add330b5ebaf5: (a: number, b: number, c: any) => [number, number];
    readonly __wbindgen_malloc: (a: number, b: number) => number;
    readonly __wbindgen_realloc: (a: number, b: number, c: number, d: number) => number;
    readonly __wbindgen_free: (a: number, b: number, c: number) => void;
    readonly __wbindgen_exn_store: (a: number) => void;
    readonly __externref_table_alloc: () => number;
    readonly __wbindgen_externrefs: WebAssembly.Table;
    readonly __wbindgen_destroy_closure: (a: number, b: number) => void;
    readonly __externref_table_dealloc: (a: number) => void;
    readonly __externref_drop_slice: (a: number, b: number) => void;
    readonly __wbindgen_start: () => void;
}

export type SyncInitInput = BufferSource | WebAssembly.Module;

/**
 * Instantiates the given `module`, which can either be bytes or
 * a precompiled `WebAssembly.Module`.
 *
 * @param {{ module: SyncInitInput }} module - Passing `SyncInitInput` directly is deprecated.
 *
 * @returns {InitOutput}
 */
export function initSync(module: { module: SyncInitInput } | SyncInitInput): InitOutput;

/**
 * If `module_or_path` is {RequestInfo} or {URL}, makes a request and
 * for everything else, calls `WebAssembly.instantiate` directly.
 *
 * @param {{ module_or_path: InitInput | Promise<InitInput> }} module_or_path - Passing `InitInput` directly is deprecated.
 *
 * @returns {Promise<InitOutput>}
 */
export default function __wbg_init (module_or_path?: { module_or_path: InitInput | Promise<InitInput> } | InitInput | Promise<InitInput>): Promise<InitOutput>;
