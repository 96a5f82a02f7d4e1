#!/usr/bin/env bash
# Core benchmarks: fold throughput, search latency over ~200 MB of prose
# natively and in wasmtime (the shipped pkg/ wasm). Writes
# bench/results/core-<date>.md with the machine, the figures and the targets.
#
#   bash bench/core.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
target_dir=${CARGO_TARGET_DIR:-target}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

cargo bench -p recall-core --bench fold --bench search 2>&1 | tee -a "$log"
cargo bench -p recall-tests --bench wasm_search 2>&1 | tee -a "$log"

date=$(date -u +%Y-%m-%d)
out=bench/results/core-$date.md
python3 - "$target_dir/criterion" "$log" "$out" <<'PY'
import json, os, platform, re, subprocess, sys
crit, log, out = sys.argv[1:4]

def est(group, name):
    base = os.path.join(crit, group, name, "new")
    with open(os.path.join(base, "estimates.json")) as f:
        e = json.load(f)
    with open(os.path.join(base, "benchmark.json")) as f:
        b = json.load(f)
    tp = (b.get("throughput") or {}).get("Bytes")
    return e["median"]["point_estimate"], e["mean"]["point_estimate"], tp

def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
    except Exception:
        return "?"

cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
mem_kb = next((int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemTotal")), 0)
notes = [l.strip() for l in open(log) if "corpus:" in l]
lines = []
lines.append(f"# Core benchmarks — {sh('date -u +%Y-%m-%dT%H:%MZ')}\n")
lines.append(f"Machine: {sh('nproc')} cores ({cpu}), {mem_kb / 1048576:.1f} GiB RAM, {platform.system()} {platform.release()}; "
             f"{sh('rustc -V')}; commit {sh('git rev-parse --short HEAD')}; wasm {os.path.getsize('pkg/recall_core_bg.wasm')} bytes. "
             "Criterion medians (mean in brackets). Shared 2-core machine: other work may have run at the same time.\n")
for n in notes:
    lines.append(f"- {n}")
lines.append("")
lines.append("## Fold throughput\n")
lines.append("| text | median | throughput | target |")
lines.append("|---|---|---|---|")
for name, target in [("ascii", "≥ 1 GB/s"), ("mixed", "—")]:
    med, mean, tp = est("fold", name)
    gbs = tp / med  # bytes per ns = GB/s
    ok = "" if name != "ascii" else (" ✅" if gbs >= 1.0 else " ❌ missed")
    lines.append(f"| {name} ({tp / 1e6:.1f} MB) | {med / 1e6:.2f} ms ({mean / 1e6:.2f}) | {gbs:.2f} GB/s | {target}{ok} |")
lines.append("")
lines.append("## Search latency over ≈ 200 MB of prose (newest, limit 20)\n")
lines.append("| query | native | wasm (wasmtime) | wasm / native | targets |")
lines.append("|---|---|---|---|---|")
for name in ["rare", "common", "three_terms"]:
    n_med, n_mean, _ = est("search_native", name)
    w_med, w_mean, _ = est("search_wasm", name)
    ratio = w_med / n_med
    t = []
    if name == "rare":
        t.append(f"native ≤ 30 ms {'✅' if n_med <= 30e6 else '❌'}")
    t.append(f"wasm ≤ 2× {'✅' if ratio <= 2 else '❌'}")
    lines.append(f"| {name} | {n_med / 1e6:.2f} ms ({n_mean / 1e6:.2f}) | {w_med / 1e6:.2f} ms ({w_mean / 1e6:.2f}) | {ratio:.2}× | {', '.join(t)} |")
with open(out, "w") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
print(f"\nwrote {out}")
PY
