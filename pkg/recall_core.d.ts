/* tslint:disable */
/* eslint-disable */

/**
 * The browser's index object: a manifest and its generations in memory.
 */
export class Index {
    free(): void;
    [Symbol.dispose](): void;
    /**
     * Adds a generation file; `name` must be `<hash16>.json` of `bytes`.
     */
    addGeneration(name: string, bytes: Uint8Array | number[]): void;
    /**
     * Whether a generation is loaded.
     */
    hasGeneration(name: string): boolean;
    /**
     * An empty index.
     */
    constructor();
    /**
     * Drops generations the current manifest no longer names.
     */
    retainReferenced(): void;
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
     * Indices of a loaded generation's superseded records, ascending
     * (empty when it is not loaded).
     */
    supersededRecords(name: string): Uint32Array;
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
    readonly index_hasGeneration: (a: number, b: number, c: number) => number;
    readonly index_new: () => number;
    readonly index_retainReferenced: (a: number) => void;
    readonly index_search: (a: number, b: any) => [number, number, number];
    readonly index_searchJson: (a: number, b: number, c: number) => [number, number];
    readonly index_sessionQueryJson: (a: number, b: number, c: number, d: number, e: number) => [number, number];
    readonly index_setManifest: (a: number, b: number, c: number) => [number, number];
    readonly index_supersededRecords: (a: number, b: number, c: number) => [number, number];
    readonly index_viewsJson: (a: number, b: number, c: number) => [number, number];
    readonly recall_add_generation: (a: number, b: number, c: number, d: number, e: number) => number;
    readonly recall_alloc: (a: number) => number;
    readonly recall_free: (a: number, b: number) => void;
    readonly recall_index_free: (a: number) => void;
    readonly recall_index_new: () => number;
    readonly recall_last_error: () => bigint;
    readonly recall_search: (a: number, b: number, c: number) => bigint;
    readonly recall_session_query: (a: number, b: number, c: number, d: number, e: number) => bigint;
    readonly recall_set_manifest: (a: number, b: number, c: number) => number;
    readonly recall_views: (a: number, b: number, c: number) => bigint;
    readonly __wbindgen_malloc: (a: number, b: number) => number;
    readonly __wbindgen_realloc: (a: number, b: number, c: number, d: number) => number;
    readonly __wbindgen_free: (a: number, b: number, c: number) => void;
    readonly __wbindgen_exn_store: (a: number) => void;
    readonly __externref_table_alloc: () => number;
    readonly __wbindgen_externrefs: WebAssembly.Table;
    readonly __externref_table_dealloc: (a: number) => void;
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
