//! Times `MemIndex` searches over a store's own segment files, natively:
//! the native half of `bench/wasm-segments.sh` (the wasm half is
//! `bench/wasm-segments.mjs`, the same index in the shipped `pkg/`).
//!
//! `cargo run --release -p recall-core --example segment_search -- DIR QUERIES ROUNDS`
//! where DIR holds `manifest.json`, `segments.txt` (segment names, one a
//! line), `segments/<name>` and `generations/<name>` as the daemon serves
//! them, and QUERIES is JSON lines of §4 requests (timed JSON in → JSON out, as the
//! wasm half does). Prints one JSON object:
//! `{searches, p50_ms, p95_ms, mean_ms, load_ms, per_request_p50_ms}` (the
//! last: each request's median over the rounds, in QUERIES order).

use recall_core::layout;
use recall_core::{MemIndex, Request};
use std::path::Path;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, queries, rounds] = args.as_slice() else {
        return Err("usage: segment_search DIR QUERIES ROUNDS".into());
    };
    let dir = Path::new(dir);
    let rounds: usize = rounds.parse()?;
    let t0 = Instant::now();
    let mut index = MemIndex::new();
    for name in std::fs::read_to_string(dir.join("segments.txt"))?.lines() {
        index.add_segment(name, &std::fs::read(dir.join(layout::SEGMENTS).join(name))?)?;
    }
    for entry in std::fs::read_dir(dir.join(layout::GENERATIONS))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        index.add_generation(&name, &std::fs::read(entry.path())?)?;
    }
    index.set_manifest(&std::fs::read(dir.join(layout::store::MANIFEST))?)?;
    let load_ms = t0.elapsed().as_secs_f64() * 1e3;
    let text = std::fs::read_to_string(queries)?;
    let reqs: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    for r in &reqs {
        Request::from_json(r)?;
        index.search_json(r);
    }
    let mut times = Vec::new();
    let mut each = vec![Vec::new(); reqs.len()];
    for _ in 0..rounds {
        for (i, r) in reqs.iter().enumerate() {
            let t = Instant::now();
            std::hint::black_box(index.search_json(r));
            let ms = t.elapsed().as_secs_f64() * 1e3;
            times.push(ms);
            each[i].push(ms);
        }
    }
    let per_request: Vec<f64> = each
        .iter_mut()
        .map(|v| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let at = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    println!(
        "{}",
        serde_json::json!({"searches": times.len(), "p50_ms": at(0.5), "p95_ms": at(0.95),
            "mean_ms": mean, "load_ms": load_ms, "per_request_p50_ms": per_request})
    );
    Ok(())
}
