#!/usr/bin/env bash
# The query language at scale: the warm daemon over HTTP answering plain
# terms, ANDs, ORs, exclusions, whole words and inline filters on one
# generated home, with the planner's report (candidates, sessions loaded) so
# an OR planned as a union of postings shows against one that is not.
#
#   bash bench/expr.sh                 # SIZE=2G, gen.py seed 7
#   SIZE=300M bash bench/expr.sh       # a quick run
#
# Writes bench/results/expr-<SIZE>-<date>.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SIZE=${SIZE:-2G}
SEED=${SEED:-7}
WORK=${WORK:-/tmp/recall-expr-bench-$SIZE}
ROUNDS=${ROUNDS:-5}
PORT=${PORT:-$((20000 + RANDOM % 20000))}
bench_setup "$SEED"

if [ ! -f "$home/.recall/index/v1/segments.json" ]; then
  run index --json > "$WORK/backfill.json"
  settle_merges "$home/.recall/index/v1/segments.json" 60 run index --json
fi
sessions=$(run status --json | python3 -c "import json,sys;print(sum(c['sessions'] for c in json.load(sys.stdin)['coverage'].values()))" 2>/dev/null || echo "?")

env "${HERMETIC[@]}" "$bin" --home "$home" --retention-days 0 serve --bind "127.0.0.1:$PORT" --no-demo \
  > "$WORK/serve.log" 2>&1 &
serve_pid=$!
trap 'kill $serve_pid 2>/dev/null || true' EXIT

out="$root/bench/results/expr-$SIZE-$(date -u +%Y-%m-%d).md"
wait_serving "$PORT"
python3 - "$PORT" "$ROUNDS" "$SIZE" "$sessions" > "$out" <<'PY'
import http.client, json, os, statistics, sys, time, urllib.parse
port, rounds, size, sessions = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
kinds = [
    ("plain", ["error", "panic", "retry", "cache"]),
    ("and", ["error retry", "cache miss", "panic thread", "test fix"]),
    ("or", ["error OR panic", "timeout | deadline", "(cache | retry) error", "migration OR schema OR index"]),
    ("not", ["error -the", "fix -test", "cache -\"cache miss\"", "panic -thread"]),
    ("word", ["w:error", "w:fix", "=cache", "w:test"]),
    ("inline filters", ["error role:user", "error source:codex", "fix since:2026-10-01", "cache -is:subagent"]),
]
conn = http.client.HTTPConnection("127.0.0.1", int(port))
def get(q, debug=False):
    p = {"q": q}
    if debug:
        p["debug"] = "true"
    t = time.perf_counter()
    conn.request("GET", "/api/sessions/message-search?" + urllib.parse.urlencode(p))
    body = json.loads(conn.getresponse().read())
    return (time.perf_counter() - t) * 1000, body
rows = []
for kind, qs in kinds:
    for q in qs:
        get(q)  # warm
        ms = sorted(get(q)[0] for _ in range(rounds))
        _, d = get(q, debug=True)
        pl = (d.get("debug") or {}).get("planner") or {}
        rows.append((kind, q, statistics.median(ms), ms[-1], d.get("state"), len(d.get("sessions", [])),
                     pl.get("candidate_shards"), pl.get("visited"), pl.get("shards_loaded")))
with open("/proc/cpuinfo") as f:
    cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
print(f"# Query language, warm daemon, {size} generated home ({sessions} sessions)\n")
print(f"{time.strftime('%Y-%m-%d', time.gmtime())}, {os.cpu_count()} cores ({cpu}). `bash bench/expr.sh` "
      f"(SIZE={size}, seed 7), release build; one keep-alive HTTP connection, one query at a time, "
      f"{rounds} timed rounds after a warming one. Times in ms (p50 / max of the rounds); the planner columns "
      "are the first page's `debug.planner` (candidate shards, visited, loaded).\n")
print("| kind | q | p50 ms | max ms | state | sessions | candidates | visited | loaded |")
print("|---|---|---:|---:|---|---:|---:|---:|---:|")
for r in rows:
    q = r[1].replace("|", "\\|")
    print(f"| {r[0]} | `{q}` | {r[2]:.2f} | {r[3]:.2f} | {r[4]} | {r[5]} | {r[6]} | {r[7]} | {r[8]} |")
PY
echo "expr.sh: wrote $out"
