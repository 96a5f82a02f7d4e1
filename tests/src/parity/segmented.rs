//! The parity run through the store's own segment files (DESIGN.md §8 wave
//! 2): the corpus's generations split into segments as the store's indexer
//! writes them (a few chunks, and some generations left to no segment, which
//! fall back to their filters), handed to a native and a wasm index as
//! bytes — and to a lazy native and a lazy wasm index that start with only
//! the manifest and the segments and load a generation only when a search
//! asks for it ([`recall_core::lazy`]). Every answer must equal the plain
//! index's (no store segments, every generation loaded) byte for byte.

use super::corpus::Corpus;
use super::wasm::WasmIndex;
use super::ParityError;
use recall_core::segment;
use recall_core::{Lazy, MemIndex, PreparedShard, Request};
use std::collections::HashMap;
use std::path::Path;

/// Segments the covered generations are split into.
pub const CHUNKS: usize = 3;
/// One generation in this many is left to no segment.
pub const UNCOVERED_EVERY: usize = 11;
/// Generations one lazy step may ask for.
pub const MAX_NEED: usize = 4;
/// The lazy indexes start empty again after this many top-level requests
/// (a fresh browser), so most searches begin with few generations loaded.
pub const RESET_EVERY: usize = 10;
/// Lazy steps one request may take before it counts as a loop.
const MAX_ROUNDS: usize = 10_000;

/// The store-like segment files of a corpus: `(name, bytes)`.
pub fn segments_of(corpus: &Corpus) -> Result<Vec<(String, Vec<u8>)>, ParityError> {
    let mut names: Vec<&(String, Vec<u8>)> = corpus.generations.iter().collect();
    names.sort_by(|a, b| a.0.cmp(&b.0));
    let covered: Vec<(&str, PreparedShard)> = names
        .iter()
        .enumerate()
        .filter(|(i, _)| i % UNCOVERED_EVERY != UNCOVERED_EVERY - 1)
        .map(|(_, (n, b))| {
            PreparedShard::from_bytes(b)
                .map(|s| (n.as_str(), s))
                .map_err(|e| ParityError::Native(format!("{n}: {e}")))
        })
        .collect::<Result<_, _>>()?;
    let per = covered.len().div_ceil(CHUNKS).max(1);
    Ok(covered
        .chunks(per)
        .map(|chunk| {
            let refs: Vec<(&str, &PreparedShard)> = chunk.iter().map(|(n, s)| (*n, s)).collect();
            let bytes = segment::build(&refs);
            (
                format!("{}.seg", recall_core::naming::hash16(&bytes)),
                bytes,
            )
        })
        .collect())
}

/// The four indexes over store segments, and the generations to feed the
/// lazy ones.
pub struct Segmented {
    /// Every generation and the segments, native.
    pub native: MemIndex,
    /// Every generation and the segments, in wasm.
    pub wasm: WasmIndex,
    lazy: MemIndex,
    lazy_wasm: WasmIndex,
    manifest: Vec<u8>,
    segments: Vec<(String, Vec<u8>)>,
    generations: HashMap<String, Vec<u8>>,
    /// Requests answered lazily.
    pub lazy_requests: usize,
    /// Lazy steps that asked for generations.
    pub lazy_rounds: usize,
    /// Generations the lazy native index loaded, summed over its lives.
    pub lazy_loaded: usize,
    /// Top-level requests since the last reset.
    since_reset: usize,
}

fn native_err(e: impl std::fmt::Display) -> ParityError {
    ParityError::Native(e.to_string())
}

fn fresh(
    manifest: &[u8],
    segments: &[(String, Vec<u8>)],
    wasm: &Path,
) -> Result<(MemIndex, WasmIndex), ParityError> {
    let mut n = MemIndex::new();
    let mut w = WasmIndex::load(wasm)?;
    fill(&mut n, &mut w, manifest, segments)?;
    Ok((n, w))
}

/// Hands both (empty) indexes the segments, then the manifest.
fn fill(
    n: &mut MemIndex,
    w: &mut WasmIndex,
    manifest: &[u8],
    segments: &[(String, Vec<u8>)],
) -> Result<(), ParityError> {
    for (name, bytes) in segments {
        n.add_segment(name, bytes).map_err(native_err)?;
        w.add_segment(name, bytes)?;
    }
    n.set_manifest(manifest).map_err(native_err)?;
    w.set_manifest(manifest)?;
    Ok(())
}

impl Segmented {
    /// Builds the segments of `corpus` and loads the four indexes.
    pub fn load(corpus: &Corpus, wasm: &Path) -> Result<Segmented, ParityError> {
        let segments = segments_of(corpus)?;
        let (mut native, mut w) = fresh(&corpus.manifest, &segments, wasm)?;
        for (name, bytes) in &corpus.generations {
            native.add_generation(name, bytes).map_err(native_err)?;
            w.add_generation(name, bytes)?;
        }
        let (lazy, lazy_wasm) = fresh(&corpus.manifest, &segments, wasm)?;
        Ok(Segmented {
            native,
            wasm: w,
            lazy,
            lazy_wasm,
            manifest: corpus.manifest.clone(),
            segments,
            generations: corpus.generations.iter().cloned().collect(),
            lazy_requests: 0,
            lazy_rounds: 0,
            lazy_loaded: 0,
            since_reset: 0,
        })
    }

    /// Called before each top-level probe: restarts the lazy indexes empty
    /// every [`RESET_EVERY`] probes.
    pub fn next_probe(&mut self) -> Result<(), ParityError> {
        self.since_reset += 1;
        if self.since_reset >= RESET_EVERY {
            self.since_reset = 0;
            // A fresh page: empty indexes (the wasm one in the same
            // instance, so the module is not compiled again).
            self.lazy = MemIndex::new();
            self.lazy_wasm.reset()?;
            fill(
                &mut self.lazy,
                &mut self.lazy_wasm,
                &self.manifest,
                &self.segments,
            )?;
        }
        Ok(())
    }

    /// The lazy native answer: steps until complete, loading what each step
    /// names.
    pub fn lazy_native(&mut self, request: &str) -> Result<String, ParityError> {
        self.lazy_requests += 1;
        let parsed = match Request::from_json(request) {
            Ok(r) => r,
            Err(_) => return Ok(self.lazy.search_lazy_json(request, MAX_NEED)),
        };
        for _ in 0..MAX_ROUNDS {
            match self.lazy.search_lazy(&parsed, MAX_NEED) {
                Ok(Lazy::Complete(_)) | Err(_) => {
                    return Ok(self.lazy.search_lazy_json(request, MAX_NEED));
                }
                Ok(Lazy::Need(names)) => {
                    self.lazy_rounds += 1;
                    if names.is_empty() || names.len() > MAX_NEED {
                        return Err(native_err(format!("bad need list {names:?}")));
                    }
                    for name in names {
                        let bytes = self
                            .generations
                            .get(&name)
                            .ok_or_else(|| native_err(format!("asked for unknown {name}")))?;
                        self.lazy.add_generation(&name, bytes).map_err(native_err)?;
                        self.lazy_loaded += 1;
                    }
                }
            }
        }
        Err(native_err(format!("lazy search did not finish: {request}")))
    }

    /// The lazy wasm answer, through `recall_search_lazy`.
    pub fn lazy_wasm(&mut self, request: &str) -> Result<String, ParityError> {
        for _ in 0..MAX_ROUNDS {
            let body = self.lazy_wasm.search_lazy_json(request, MAX_NEED as u32)?;
            let need: Option<Vec<String>> = serde_json::from_str::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| serde_json::from_value(v.get("need")?.clone()).ok());
            let Some(names) = need else {
                return Ok(body);
            };
            for name in names {
                let bytes = self
                    .generations
                    .get(&name)
                    .ok_or_else(|| ParityError::Wasm(format!("asked for unknown {name}")))?;
                self.lazy_wasm.add_generation(&name, bytes)?;
            }
        }
        Err(ParityError::Wasm(format!(
            "lazy search did not finish: {request}"
        )))
    }
}
