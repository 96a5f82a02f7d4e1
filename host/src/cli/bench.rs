//! `recall bench-search` (hidden): times a fixed query mix in one process
//! against a warm arena, as a long-running server would answer it. Prints
//! one JSON object with per-query latencies (p50, p95, max) and the arena.

use super::{Context, Found, Globals};
use crate::engine::arena::Arena;
use crate::engine::catalog::StoreCatalog;
use anyhow::Context as _;
use clap::Args;
use recall_core::query::Request;
use recall_core::search::Budgets;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// `recall bench-search` options.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// One request per line: a JSON object of §4 fields, or a bare q.
    #[arg(long)]
    pub queries: PathBuf,
    /// Timed rounds over the whole mix (after one warming round).
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Arena budget in MiB.
    #[arg(long, default_value_t = 192)]
    pub arena_mib: usize,
}

/// Runs the benchmark.
pub fn run(g: &Globals, a: BenchArgs) -> anyhow::Result<Found> {
    let text = std::fs::read_to_string(&a.queries)
        .with_context(|| format!("cannot read {}", a.queries.display()))?;
    let mut requests = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let r = if line.starts_with('{') {
            Request::from_json(line).map_err(|e| anyhow::anyhow!("{}: {}", e.code, e.message))?
        } else {
            Request::new(line)
        };
        requests.push(r);
    }
    let ctx = Context::new(g)?;
    let catalog = StoreCatalog::new(ctx.store.clone(), Arc::new(Arena::new(a.arena_mib << 20)));
    let run_once = |r: &Request| -> anyhow::Result<(f64, usize, bool)> {
        let t = Instant::now();
        let resp = r
            .parse()
            .and_then(|q| catalog.search(&q, false, Budgets::default()))
            .map_err(|e| anyhow::anyhow!("{}: {}", e.code, e.message))?;
        Ok((
            t.elapsed().as_secs_f64() * 1000.0,
            resp.sessions.len(),
            resp.partial_reason.is_some(),
        ))
    };
    let warm_start = Instant::now();
    let mut warm_partial = 0;
    for r in &requests {
        warm_partial += usize::from(run_once(r)?.2);
    }
    let warm_ms = warm_start.elapsed().as_secs_f64() * 1000.0;
    let mut times = Vec::new();
    let mut per_query: Vec<(f64, usize)> = vec![(0.0, 0); requests.len()];
    let mut partial = 0;
    let mut found = 0;
    for _ in 0..a.rounds {
        for (i, r) in requests.iter().enumerate() {
            let (ms, n, p) = run_once(r)?;
            times.push(ms);
            per_query[i].0 = per_query[i].0.max(ms);
            per_query[i].1 += usize::from(p);
            partial += usize::from(p);
            found += usize::from(n > 0);
        }
    }
    // The slowest queries by line number (never their text).
    let mut slowest: Vec<(usize, f64, usize)> = per_query
        .iter()
        .enumerate()
        .map(|(i, (ms, p))| (i + 1, *ms, *p))
        .collect();
    slowest.sort_by(|a, b| b.1.total_cmp(&a.1));
    slowest.truncate(5);
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| -> f64 {
        if times.is_empty() {
            return 0.0;
        }
        let i = ((times.len() as f64 - 1.0) * p).round() as usize;
        times[i.min(times.len() - 1)]
    };
    let out = serde_json::json!({
        "queries": requests.len(),
        "rounds": a.rounds,
        "searches": times.len(),
        "found": found,
        "partial": partial,
        "first_round_ms": warm_ms,
        "first_round_partial": warm_partial,
        "p50_ms": pct(0.50),
        "p95_ms": pct(0.95),
        "max_ms": times.last().copied().unwrap_or(0.0),
        "arena": catalog.arena().stats(),
        "slowest": slowest.iter().map(|(line, ms, p)| serde_json::json!({"line": line, "max_ms": ms, "partial": p})).collect::<Vec<_>>(),
    });
    outln!("{out}")?;
    Ok(Found::Yes)
}
