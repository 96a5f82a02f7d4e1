//! The search benchmarks of `core/benches/search.rs`, run in wasmtime on the
//! shipped `pkg/recall_core_bg.wasm` through its byte ABI, over the same
//! ≈ 200 MB corpus, to compare wasm with native (target: ≤ 2× native).
//! `RECALL_BENCH_WASM=<file>` benches another build instead (e.g. to compare
//! optimisation levels).

#[path = "../../core/benches/support/mod.rs"]
mod support;

use criterion::{criterion_group, criterion_main, Criterion};
use recall_tests::parity::{shipped_wasm, wasm::WasmIndex};
use std::hint::black_box;

fn bench_wasm_search(c: &mut Criterion) {
    let sessions = support::truth_sessions();
    let corpus = support::build(&sessions, support::TARGET_BYTES);
    let wasm = std::env::var_os("RECALL_BENCH_WASM").map_or_else(shipped_wasm, Into::into);
    let mut index = WasmIndex::load(&wasm).unwrap_or_else(|e| panic!("{e}"));
    for (name, bytes) in &corpus.generations {
        index
            .add_generation(name, bytes)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    index
        .set_manifest(&corpus.manifest)
        .unwrap_or_else(|e| panic!("{e}"));
    let rare = index
        .search_json(&support::request(&corpus.rare))
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "wasm search corpus: {} MB of prose in {} sessions; rare term hits: {}",
        corpus.prose_bytes / 1_000_000,
        corpus.generations.len(),
        rare.matches("\"session_key\"").count(),
    );
    let mut g = c.benchmark_group("search_wasm");
    g.sample_size(20);
    for (name, q) in [
        ("rare", corpus.rare.as_str()),
        ("common", support::COMMON),
        ("three_terms", support::THREE_TERMS),
    ] {
        let req = support::request(q);
        g.bench_function(name, |b| {
            b.iter(|| index.search_json(black_box(&req)).unwrap_or_default())
        });
    }
    g.finish();
}

criterion_group!(benches, bench_wasm_search);
criterion_main!(benches);
