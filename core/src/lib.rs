//! recall-core: the query core of recall.
//!
//! Folding ([`fold`]), matching ([`matcher`]), query parsing ([`query`]),
//! snippets and highlights ([`snippet`]), the search in three steps —
//! [`plan`], scan with a [`collector`], [`page`] — and cursors ([`cursor`])
//! over shards ([`model`]). The crate does no file,
//! network, clock or thread use: the host hands it bytes, the current time
//! and a clock for the scan deadline, so native and WebAssembly builds give
//! byte-identical answers. It has no target-specific code and no `unsafe`:
//! the browser's binding (wasm-bindgen, fetch, the Cache API, the byte ABI
//! for wasmtime) is the `recall-wasm` crate, which depends on this one.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod active;
pub mod catalog;
pub mod collector;
pub mod cursor;
pub mod directory;
pub mod error;
pub mod expr;
pub mod fold;
pub mod grams;
pub mod index;
pub mod lane;
pub mod layout;
pub mod lazy;
pub mod matcher;
pub mod matching;
pub mod model;
pub mod naming;
pub mod page;
pub mod plan;
pub mod prepared;
pub mod preparing;
pub mod prune;
pub mod query;
pub mod response;
pub mod search;
pub mod segment;
pub mod session;
pub mod snippet;
pub mod time;

pub use active::derive_active;
pub use catalog::{Catalog, LoadedShard};
pub use error::{CatalogError, ErrorCode, LoadError};
pub use grams::ShardGrams;
pub use index::MemIndex;
pub use lazy::Lazy;
pub use model::{Manifest, ManifestEntry, MessageRecord, Role, SessionMeta, Shard, Source};
pub use prepared::PreparedShard;
pub use preparing::Preparing;
pub use query::{Query, QueryError, Request};
pub use response::Response;
pub use search::{search, search_request, Budgets, SearchEnv};
pub use segment::{Segment, SegmentSet};
