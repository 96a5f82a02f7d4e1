#!/usr/bin/env bash
# Extraction throughput: single-thread MB/s of raw transcript per source.
#
#   bench/extract.sh [SOURCES] [SIZE] [RUNS]
#     SOURCES  comma list (default claude-code,codex; e.g. claude-code,codex,kimi,pi,intendant)
#     SIZE     home size for corpus-gen --target-bytes (default 1G)
#     RUNS     timed runs per source (default 3)
#
# Generates the home under ${RECALL_BENCH_DIR:-/tmp/recall-bench-extract} (reused when the
# same sources/size/seed were generated before), builds the release `extract_bench`
# example, runs it RUNS times and appends a section to bench/results/extract-<date>.md.
set -euo pipefail

SOURCES=${1:-claude-code,codex}
SIZE=${2:-1G}
RUNS=${3:-3}
SEED=42
REPO=$(cd "$(dirname "$0")/.." && pwd)
GEN="$REPO/tests/shared/corpus-gen/gen.py"
OUT=${RECALL_BENCH_DIR:-/tmp/recall-bench-extract}
STAMP="sources=$SOURCES size=$SIZE seed=$SEED"

[ -f "$GEN" ] || { echo "corpus generator not found at $GEN (vendored under tests/shared/)" >&2; exit 2; }
if [ "$(cat "$OUT/stamp" 2>/dev/null)" != "$STAMP" ]; then
    mkdir -p "$OUT"
    python3 "$GEN" --out "$OUT" --seed "$SEED" --target-bytes "$SIZE" --sources "$SOURCES" --force
    echo "$STAMP" > "$OUT/stamp"
fi

cd "$REPO"
cargo build --release --quiet -p recall-host --example extract_bench
BIN="${CARGO_TARGET_DIR:-$REPO/target}/release/examples/extract_bench"

RAW=$(mktemp)
trap 'rm -f "$RAW"' EXIT
for _ in $(seq "$RUNS"); do
    "$BIN" "$OUT/home" "$SOURCES" >> "$RAW"
done

DATE=$(date +%F)
RESULT="$REPO/bench/results/extract-$DATE.md"
mkdir -p "$REPO/bench/results"
python3 - "$RAW" "$RESULT" "$STAMP" "$RUNS" <<'PY'
import json, os, platform, statistics, subprocess, sys
raw, result, stamp, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
rows = {}
for line in open(raw):
    r = json.loads(line)
    rows.setdefault(r["source"], []).append(r)
def cpu_model():
    for l in open("/proc/cpuinfo"):
        if l.startswith("model name"):
            return l.split(":", 1)[1].strip()
    return platform.processor() or "unknown"
def mem_total():
    for l in open("/proc/meminfo"):
        if l.startswith("MemTotal"):
            return "%.1f GiB" % (int(l.split()[1]) / 1024 / 1024)
    return "unknown"
def sh(*a):
    try:
        return subprocess.run(a, capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"
out = ["# Extraction throughput — %s" % sh("date", "-u", "+%Y-%m-%d %H:%M UTC"), "",
       "Machine: %s cores (`nproc`), %s, %s RAM; load average at the end: %s." % (
           os.cpu_count(), cpu_model(), mem_total(), " ".join(open("/proc/loadavg").read().split()[:3])),
       "Build: release (`cargo build --release -p recall-host --example extract_bench`), %s, commit %s." % (
           sh("rustc", "--version"), sh("git", "rev-parse", "--short", "HEAD")),
       "Home: corpus-gen `%s`; page cache warmed before each timed pass; one thread; %s runs." % (stamp, runs),
       "",
       "MB/s = raw transcript bytes (10^6) / time. *CPU* uses the thread's on-CPU time (`/proc/thread-self/schedstat`),",
       "which stays meaningful while other jobs share the 2 cores; *wall* is elapsed time (best and median of the runs).",
       "",
       "| source | sessions | records | MB | CPU MB/s (best) | CPU MB/s (median) | wall MB/s (best) | wall MB/s (median) | errors |",
       "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
for src, rs in rows.items():
    cpu = [r["cpu_mb_per_s"] for r in rs]
    wall = [r["wall_mb_per_s"] for r in rs]
    r0 = rs[0]
    out.append("| %s | %d | %d | %.0f | %.1f | %.1f | %.1f | %.1f | %d |" % (
        src, r0["sessions"], r0["records"], r0["bytes"] / 1e6, max(cpu), statistics.median(cpu),
        max(wall), statistics.median(wall), max(r["errors"] for r in rs)))
out += ["", "Target: ≥ 150 MB/s per source, single thread."]
# One section per run: a day's file keeps every run of that day.
sep = "\n---\n\n" if os.path.exists(result) else ""
open(result, "a").write(sep + "\n".join(out) + "\n")
print("\n".join(out))
PY
echo "wrote $RESULT"
