#!/usr/bin/env bash
# Identifiers and paths at scale: terms made of common
# trigrams (`renderRoute`, `fold_response`, `src/store/event.py`) taken from
# the home's own records, each asked once of a warm daemon as a person does
# (the first asking loads the candidates' shards), then twice more; and the
# same terms as `recall search` processes with no daemon (wall time, RSS,
# the planner's shards loaded and bytes read).
#
#   bash bench/identifiers.sh              # SIZE=2G, gen.py seed 7
#   BIN=/path/to/recall bash bench/identifiers.sh
#
# Writes bench/results/identifiers-<SIZE>-<date>.md (or $OUT).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SIZE=${SIZE:-2G}
SEED=${SEED:-7}
WORK=${WORK:-/tmp/recall-ident-bench-$SIZE}
PER_KIND=${PER_KIND:-8}
PORT=${PORT:-$((20000 + RANDOM % 20000))}
bench_setup "$SEED"

if [ ! -f "$home/.recall/index/v1/segments.json" ]; then
  run index --json > "$WORK/backfill.json"
  settle_merges "$home/.recall/index/v1/segments.json" 60 run index --json
fi

# The terms: per kind, PER_KIND distinct ones held by few sessions (the
# hard case: each of their trigrams is everywhere, the term is not).
python3 - "$home/../truth.jsonl" "$PER_KIND" > "$WORK/terms.txt" <<'PY'
import collections, json, random, re, sys
truth, per = sys.argv[1], int(sys.argv[2])
pat = {
    "camelCase": re.compile(r"\b[a-z]+[A-Z][a-z]+\b"),
    "snake_case": re.compile(r"\b[a-z]+_[a-z]+\b"),
    "path": re.compile(r"\b[\w-]+/[\w-]+/[\w-]+\.\w+\b"),
}
held = {k: collections.defaultdict(set) for k in pat}
for line in open(truth):
    if '"type":"record"' not in line:
        continue
    d = json.loads(line)
    for kind, p in pat.items():
        for m in p.findall(d["text"]):
            held[kind][m].add(d["key"])
rng = random.Random(27)
for kind, terms in held.items():
    rare = sorted(t for t, s in terms.items() if 20 <= len(s) <= 60)
    for t in rng.sample(rare, min(per, len(rare))):
        print(kind, t)
PY

env "${HERMETIC[@]}" "$bin" --home "$home" --retention-days 0 serve --bind "127.0.0.1:$PORT" --no-demo \
  > "$WORK/serve.log" 2>&1 &
serve_pid=$!
trap 'kill $serve_pid 2>/dev/null || true' EXIT
wait_serving "$PORT"

out=${OUT:-$root/bench/results/identifiers-$SIZE-$(date -u +%Y-%m-%d).md}
python3 - "$PORT" "$WORK/terms.txt" "$SIZE" "$bin" "$home" > "$out" <<'PY'
import http.client, json, os, platform, statistics, sys, time, urllib.parse
port, terms, size, binary, home = sys.argv[1:6]
terms = [l.rstrip("\n").split(" ", 1) for l in open(terms)]
conn = http.client.HTTPConnection("127.0.0.1", int(port))
def ask(q):
    t = time.perf_counter()
    conn.request("GET", "/api/sessions/message-search?" + urllib.parse.urlencode({"q": q, "debug": "true"}))
    d = json.loads(conn.getresponse().read())
    return (time.perf_counter() - t) * 1000, d
rows = []
for kind, q in terms:
    first_ms, d = ask(q)
    pl = (d.get("debug") or {}).get("planner") or {}
    again = [ask(q)[0] for _ in range(2)]
    rows.append((kind, q, first_ms, d.get("partial_reason") or "complete", len(d.get("sessions", [])),
                 pl.get("candidate_shards"), pl.get("shards_loaded"), again))
print(f"# Identifiers and paths, {size} home — {time.strftime('%Y-%m-%d', time.gmtime())}\n")
print(f"Machine: {os.cpu_count()} cores, {platform.machine()}. `bash bench/identifiers.sh` (gen.py seed 7), binary `{binary}`.")
print("Each term is held by 20–60 sessions; each of its trigrams by most of them. Warm `recall serve`, one query at a time, "
      "the first asking (nothing of the candidates loaded yet), then two repeats.\n")
print("| kind | term | first asking ms | answer | sessions | candidate shards | shards loaded | 2nd / 3rd ms |")
print("|---|---|---:|---|---:|---:|---:|---|")
for k, q, ms, st, n, c, l, again in rows:
    print(f"| {k} | `{q}` | {ms:.1f} | {st} | {n} | {c} | {l} | {again[0]:.1f} / {again[1]:.1f} |")
firsts = sorted(r[2] for r in rows)
print(f"\nFirst asking: p50 {statistics.median(firsts):.1f} ms, max {firsts[-1]:.1f} ms; "
      f"{sum(r[3] != 'complete' for r in rows)} of {len(rows)} partial.\n")
PY
kill $serve_pid 2>/dev/null || true
wait $serve_pid 2>/dev/null || true
python3 - "$WORK/terms.txt" "$bin" "$home" >> "$out" <<'PY'
import json, os, statistics, subprocess, sys, time
terms, binary, home = sys.argv[1:4]
terms = [l.rstrip("\n").split(" ", 1) for l in open(terms)]
print("No daemon: each term as one `recall search` process (the daemon stopped).\n")
print("| kind | term | wall ms | RSS MiB | shards loaded | MB read |")
print("|---|---|---:|---:|---:|---:|")
walls = []
for kind, q in terms:
    t = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", binary, "--home", home, "--retention-days", "0",
                        "search", "--json", "--debug", "--", q], capture_output=True, text=True)
    ms = (time.perf_counter() - t) * 1000
    walls.append(ms)
    rss = int(p.stderr.strip().splitlines()[-1]) // 1024
    pl = (json.loads(p.stdout).get("debug") or {}).get("planner") or {}
    print(f"| {kind} | `{q}` | {ms:.0f} | {rss} | {pl.get('shards_loaded')} | {(pl.get('bytes_read') or 0) / 1e6:.0f} |")
walls.sort()
print(f"\nProcesses: p50 {statistics.median(walls):.0f} ms, max {walls[-1]:.0f} ms.")
PY
echo "wrote $out"
