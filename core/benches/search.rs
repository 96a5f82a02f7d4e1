//! Search latency (DESIGN.md §4) over about 200 MB of corpus-gen prose held
//! in a [`MemIndex`]: a rare term (one record), a common term and a 3-term
//! query, default filters (newest first, 20 sessions).

mod support;

use criterion::{criterion_group, criterion_main, Criterion};
use recall_core::MemIndex;
use std::hint::black_box;

fn bench_search(c: &mut Criterion) {
    let sessions = support::truth_sessions();
    let corpus = support::build(&sessions, support::TARGET_BYTES);
    let mut index = MemIndex::new();
    for (name, bytes) in &corpus.generations {
        index
            .add_generation(name, bytes)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    index
        .set_manifest(&corpus.manifest)
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "search corpus: {} MB of prose in {} sessions ({} copies of the truth); rare term hits: {}",
        corpus.prose_bytes / 1_000_000,
        corpus.generations.len(),
        corpus.copies,
        index
            .search_json(&support::request(&corpus.rare))
            .matches("\"session_key\"")
            .count(),
    );
    let mut g = c.benchmark_group("search_native");
    g.sample_size(20);
    for (name, q) in [
        ("rare", corpus.rare.as_str()),
        ("common", support::COMMON),
        ("three_terms", support::THREE_TERMS),
    ] {
        let req = support::request(q);
        g.bench_function(name, |b| b.iter(|| index.search_json(black_box(&req))));
    }
    g.finish();
}

criterion_group!(benches, bench_search);
criterion_main!(benches);
