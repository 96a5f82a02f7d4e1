#!/usr/bin/env bash
# `recall search` with no daemon: each query is its own process that opens
# the store, as a user without `recall serve` runs it. Wall time and peak
# RSS (VmHWM: the mapped segment pages the process touched count) per
# process, p50 / p95 per query kind, with the store's query-time refresh
# (the default) and with `--no-refresh`.
#
#   WORK=/tmp/w BIN=target/release/recall bash bench/nodaemon.sh
#
# WORK/g is a generated home (bench_setup makes it; SIZE, SEED as there).
# The store under it is used as it is when INDEXED=1 (else backfilled first).
# Query kinds: rare (a prose token of one record, from truth.jsonl), common
# (everyday words), identifiers (camelCase / snake_case words of the home's
# records held by 20–MOST sessions, default 60), paths
# (`src/store/event.py`, as many) and error-like phrases (`AssertionError: assert 3 == 4`,
# `KeyError: 'store'`, quoted, held by 5–200 sessions). Writes OUT (default
# bench/results/nodaemon-<SIZE>-<date>.md).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SIZE=${SIZE:-2G}
SEED=${SEED:-7}
WORK=${WORK:-/tmp/recall-nodaemon-$SIZE}
QN=${QN:-15}
bench_setup "$SEED"
OUT=${OUT:-$root/bench/results/nodaemon-$SIZE-$(date -u +%Y-%m-%d).md}
if [ "${INDEXED:-0}" != 1 ]; then
  rm -rf "$home/.recall"
  run index --json > "$WORK/backfill.json"
  settle_merges "$home/.recall/index/v1/segments.json" 60 run index --json
fi
# No daemon may answer for the store (exit 2: none did; 0 or 1: one
# answered, with or without hits).
asked=0
env "${HERMETIC[@]}" "$bin" --home "$home" search --via daemon x >/dev/null 2>&1 || asked=$?
if [ "$asked" != 2 ]; then
  echo "nodaemon.sh: a daemon answers for $home: stop it first" >&2
  exit 2
fi

python3 - "$WORK/g/truth.jsonl" "$QN" "${MOST:-60}" "$root/bench" > "$WORK/queries.tsv" <<'PY'
import json, random, re, sys
truth, qn, most = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sys.path.insert(0, sys.argv[4])
from kinds import Held
rng = random.Random(5)
rare, held = [], Held()
with open(truth) as f:
    for line in f:
        d = json.loads(line)
        if d["type"] != "record":
            continue
        t = d["text"]
        m = re.search(r"u[0-9a-hjkmnp-tv-z]{10}", t)
        if m and len(rare) < 400:
            rare.append(m.group(0))
        held.add(d["key"], t)
for t in rng.sample(rare, min(qn, len(rare))):
    print(f"rare\t{t}")
for t in ["error", "the", "fix", "test", "cache", "release", "build", "config"][:qn]:
    print(f"common\t{t}")
for t in held.pick("identifier", rng, qn, 20, most):
    print(f"identifier\t{t}")
for t in held.pick("path", rng, qn, 20, most):
    print(f"path\t{t}")
for t in held.pick("error", rng, qn, 5, 200):
    print(f"error\t\"{t}\"")
PY

measure() {  # mode label flags...
  local mode=$1; shift
  while IFS=$'\t' read -r kind q; do
    local t0 t1
    # A refresh sweeps only when the last sweep is over 1 s old.
    [ "$mode" = refresh ] && sleep 1.1
    t0=$(date +%s%N)
    /usr/bin/time -f "%M" -o "$WORK/t" env "${HERMETIC[@]}" "$bin" --home "$home" --retention-days 0 \
      search --via local "$@" --json -- "$q" > "$WORK/r.json" 2>/dev/null || true
    t1=$(date +%s%N)
    echo "$mode $kind $(( (t1 - t0) / 1000 )) $(tail -1 "$WORK/t")"
  done < "$WORK/queries.tsv"
}
# One warming pass (the page cache holds the store, as on a machine in use).
measure warm --no-refresh > /dev/null
SWEEP_FLAG=${SWEEP_FLAG---refresh}
# shellcheck disable=SC2086
{ measure refresh $SWEEP_FLAG; measure norefresh --no-refresh; } > "$WORK/nodaemon.txt"

python3 - "$WORK/nodaemon.txt" "$OUT" "$bin" "$SIZE" "$SEED" "$home" <<'PY'
import os, subprocess, sys, time
from collections import defaultdict
src, out, binp, size, seed, home = sys.argv[1:7]
rows = defaultdict(list)
for line in open(src):
    mode, kind, secs, kb = line.split()
    rows[(mode, kind)].append((int(secs) / 1000, int(kb) / 1024))
def pct(v, p):
    v = sorted(v); return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]
rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
import json
store = os.path.join(home, ".recall/index/v1")
listed = json.load(open(os.path.join(store, "segments.json")))["segments"]
segbytes = sum(os.path.getsize(os.path.join(store, "segments", s["name"])) for s in listed)
lines = [f"# `recall search` with no daemon — {size} (gen.py seed {seed})", "",
         f"`bash bench/nodaemon.sh` at {rev}, binary `{binp}`, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. "
         f"Machine: {os.cpu_count()} cores ({cpu}), load average {open('/proc/loadavg').read().split()[:3]}. "
         f"Live segments: {len(listed)}, {segbytes / 1e6:.0f} MB. Each query is one process (`--via local`), after one warming pass.", "",
         "| query kind | queries | as is: wall ms p50 / p95 | as is: peak RSS MiB p50 / max | sweep first: wall ms p50 / p95 | sweep first: peak RSS MiB p50 / max |",
         "|---|---|---|---|---|---|"]
for kind in ["rare", "common", "identifier", "path", "error"]:
    a, b = rows[("refresh", kind)], rows[("norefresh", kind)]
    if not a:
        continue
    f = lambda r: f"{pct([x[0] for x in r], 50):.0f} / {pct([x[0] for x in r], 95):.0f}"
    g = lambda r: f"{pct([x[1] for x in r], 50):.0f} / {max(x[1] for x in r):.0f}"
    lines.append(f"| {kind} | {len(a)} | {f(b)} | {g(b)} | {f(a)} | {g(a)} |")
with open(out, "a") as o:
    o.write("\n".join(lines) + "\n\n")
print("\n".join(lines))
PY
