/* tslint:disable */
/* eslint-disable */
export const memory: WebAssembly.Memory;
export const __wbg_index_free: (a: number, b: number) => void;
export const index_addGeneration: (a: number, b: number, c: number, d: number, e: number) => [number, number];
export const index_hasGeneration: (a: number, b: number, c: number) => number;
export const index_new: () => number;
export const index_retainReferenced: (a: number) => void;
export const index_search: (a: number, b: any) => [number, number, number];
export const index_searchJson: (a: number, b: number, c: number) => [number, number];
export const index_setManifest: (a: number, b: number, c: number) => [number, number];
export const index_supersededRecords: (a: number, b: number, c: number) => [number, number];
export const recall_add_generation: (a: number, b: number, c: number, d: number, e: number) => number;
export const recall_alloc: (a: number) => number;
export const recall_free: (a: number, b: number) => void;
export const recall_index_free: (a: number) => void;
export const recall_index_new: () => number;
export const recall_last_error: () => bigint;
export const recall_search: (a: number, b: number, c: number) => bigint;
export const recall_set_manifest: (a: number, b: number, c: number) => number;
export const __wbindgen_malloc: (a: number, b: number) => number;
export const __wbindgen_realloc: (a: number, b: number, c: number, d: number) => number;
export const __wbindgen_free: (a: number, b: number, c: number) => void;
export const __wbindgen_exn_store: (a: number) => void;
export const __externref_table_alloc: () => number;
export const __wbindgen_externrefs: WebAssembly.Table;
export const __externref_table_dealloc: (a: number) => void;
export const __wbindgen_start: () => void;
