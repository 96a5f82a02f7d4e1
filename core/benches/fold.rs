//! Fold throughput (DESIGN.md §3) on corpus-gen prose: all-ASCII records
//! (the fast path) and records with non-ASCII text (mixed scripts).

mod support;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use recall_core::fold::fold;
use std::hint::black_box;

/// Bytes of text folded per iteration.
const TEXT_BYTES: usize = 4 << 20;

fn bench_fold(c: &mut Criterion) {
    let sessions = support::truth_sessions();
    let (ascii, mixed) = support::fold_texts(&sessions, TEXT_BYTES);
    let mut g = c.benchmark_group("fold");
    g.throughput(Throughput::Bytes(ascii.len() as u64));
    g.bench_function("ascii", |b| b.iter(|| fold(black_box(&ascii))));
    g.throughput(Throughput::Bytes(mixed.len() as u64));
    g.bench_function("mixed", |b| b.iter(|| fold(black_box(&mixed))));
    g.finish();
}

criterion_group!(benches, bench_fold);
criterion_main!(benches);
