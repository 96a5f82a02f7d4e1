//! Single-thread extraction throughput over a generated home (used by
//! `bench/extract.sh`): `extract_bench <home> [source,…]` discovers each
//! source's sessions under `<home>`, warms the page cache, extracts every
//! session on one thread and prints one JSON line per source with the raw
//! transcript bytes, the wall and on-CPU time and the MB/s of each. The
//! machine is shared, so on-CPU time (`/proc/thread-self/schedstat`) is the
//! steadier figure; wall time is reported beside it.

use recall_core::model::Source;
use recall_host::extract::{discover, extract, Roots};
use std::io::Read;
use std::path::PathBuf;
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let home = PathBuf::from(
        args.next()
            .ok_or_else(|| anyhow::anyhow!("usage: extract_bench <home> [sources]"))?,
    );
    let wanted: Vec<Source> = match args.next() {
        Some(list) => list
            .split(',')
            .map(|s| Source::parse(s.trim()).ok_or_else(|| anyhow::anyhow!("unknown source {s}")))
            .collect::<anyhow::Result<_>>()?,
        None => Source::ALL.to_vec(),
    };
    let units = discover(&Roots::resolve(&home, |_| None));
    for source in wanted {
        let mine: Vec<_> = units.iter().filter(|u| u.source == source).collect();
        let mut bytes = 0u64;
        let mut buf = vec![0u8; 1 << 20];
        for f in mine.iter().flat_map(|u| &u.files) {
            // Warm the page cache so the figure is the extractor's, not the disk's.
            if let Ok(mut file) = std::fs::File::open(f) {
                while let Ok(n) = file.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                }
                bytes += file.metadata().map(|m| m.len()).unwrap_or(0);
            }
        }
        let start = Instant::now();
        let cpu_start = cpu_ns();
        let (mut sessions, mut records, mut errors) = (0u64, 0u64, 0u64);
        for u in &mine {
            match extract(u) {
                Ok(Some(x)) => {
                    sessions += 1;
                    records += x.records.len() as u64;
                }
                Ok(None) => {}
                Err(_) => errors += 1,
            }
        }
        let secs = start.elapsed().as_secs_f64();
        let cpu = match (cpu_start, cpu_ns()) {
            (Some(a), Some(b)) => (b - a) as f64 / 1e9,
            _ => secs,
        };
        let mb_s = |s: f64| (bytes as f64 / 1e6 / s.max(1e-9) * 10.0).round() / 10.0;
        println!(
            "{}",
            serde_json::json!({
                "source": source.as_str(), "units": mine.len(), "sessions": sessions, "records": records,
                "errors": errors, "bytes": bytes,
                "wall_s": (secs * 1000.0).round() / 1000.0, "wall_mb_per_s": mb_s(secs),
                "cpu_s": (cpu * 1000.0).round() / 1000.0, "cpu_mb_per_s": mb_s(cpu),
            })
        );
    }
    Ok(())
}

/// Nanoseconds this thread has run on a CPU (Linux), if known.
fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}
