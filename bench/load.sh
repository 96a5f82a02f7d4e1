#!/usr/bin/env bash
# Load test of `recall serve` on loopback, bounded in time (issue 12): 64
# clients for DURATION seconds (default 60) on search, export and locate at
# once — 2 search connections (the search cap), 31 export, 31 locate — against
# a generated home (SESSIONS sessions, default 200). Expects no 5xx, 429
# `busy` beyond the export/locate caps, flat server RSS and search p99 ≤ 50 ms
# while exports are flooded. Figures to bench/results/load-<date>.md.
#
#   bash bench/load.sh [DURATION] [SESSIONS]
#
# Needs wrk (Debian: apt-get install wrk) and python3; builds the release binary.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
duration=${1:-60}
sessions=${2:-200}
work=${LOAD_WORK:-/tmp/recall-load}
report=$root/bench/results/load-$(date -u +%Y-%m-%d).md
command -v wrk >/dev/null || { echo "load.sh: wrk is not installed" >&2; exit 2; }

cargo build --release -q -p recall-host
bin=${CARGO_TARGET_DIR:-$root/target}/release/recall
if [ ! -f "$work/g/truth.jsonl" ] || [ "$(cat "$work/g/stamp" 2>/dev/null)" != "$sessions" ]; then
  rm -rf "$work"
  mkdir -p "$work"
  python3 tests/shared/corpus-gen/gen.py --out "$work/g" --seed 7 --sessions "$sessions" --force >/dev/null
  echo "$sessions" > "$work/g/stamp"
fi
home=$work/g/home
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
env -u RECALL_HOME -u RECALL_TOKEN -u CLAUDE_CONFIG_DIR -u CODEX_HOME -u KIMI_CODE_HOME -u KIMI_SHARE_DIR \
  -u PI_CODING_AGENT_DIR -u INTENDANT_HOME \
  "$bin" --home "$home" --retention-days 0 serve --no-demo --bind "127.0.0.1:$port" \
  --sweep-interval 3600 2>"$work/serve.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
base=http://127.0.0.1:$port

# Wait for the backfill, then make the path lists.
python3 - "$base" "$work" <<'PY'
import base64, json, sys, time, urllib.parse, urllib.request
base, work = sys.argv[1], sys.argv[2]
def get(path):
    with urllib.request.urlopen(base + path, timeout=30) as r:
        return json.load(r)
for _ in range(1200):
    try:
        st = get("/api/index/status")
        if st.get("phase") in ("current", "degraded"):
            break
    except Exception:
        pass
    time.sleep(0.5)
else:
    sys.exit("the index never finished building")
v = get("/api/sessions?limit=500")
keys = [s["session_key"] for s in v["sessions"]]
words = ["error", "test", "file", "build", "function", "config", "the", "fix", "update", "data"]
q = urllib.parse.quote
with open(f"{work}/search.txt", "w") as f:
    for w in words:
        f.write(f"/api/sessions/message-search?q={q(w)}\n")
with open(f"{work}/export.txt", "w") as f:
    for k in keys:
        f.write(f"/api/session/{q(k, safe='')}/export\n")
locs = []
for w in words:
    for s in get(f"/api/sessions/message-search?q={q(w)}&limit=20")["sessions"]:
        for h in s["hits"][:2]:
            b = base64.urlsafe_b64encode(json.dumps(h["locator"]).encode()).decode().rstrip("=")
            locs.append(f"/api/session/{q(s['session_key'], safe='')}?limit=20&locate={b}")
with open(f"{work}/locate.txt", "w") as f:
    f.write("\n".join(locs[:400]) + "\n")
print(f"load.sh: {len(keys)} sessions, {len(locs)} locators")
PY

rss() { awk '/VmRSS/ {print int($2/1024)}' "/proc/$pid/status" 2>/dev/null || echo 0; }
rss_start=$(rss)
: > "$work/rss.txt"
( while kill -0 $pid 2>/dev/null; do rss >> "$work/rss.txt"; sleep 2; done ) &
sampler=$!
run() { wrk -t "$1" -c "$2" -d "${duration}s" --timeout 30s -s bench/load.lua "$base" -- "$work/$3.txt" > "$work/$3.out" 2>&1; }
run 1 2 search & a=$!
run 2 31 export & b=$!
run 2 31 locate & c=$!
wait $a $b $c
kill $sampler 2>/dev/null || true
rss_end=$(rss)
rss_max=$(sort -n "$work/rss.txt" | tail -1)

mkdir -p bench/results
{
  echo
  echo "## load $(date -u +%Y-%m-%dT%H:%MZ): 64 clients × ${duration} s, $sessions sessions"
  echo
  echo "Machine: $(nproc) cores (shared with other work while it ran). Loopback, release binary,"
  echo "\`bash bench/load.sh $duration $sessions\`: wrk, 2 search + 31 export + 31 locate connections at once."
  echo
  echo "| requests | connections | answers by status | p50 ms | p99 ms | max ms | total | socket errors |"
  echo "|---|---:|---|---:|---:|---:|---:|---:|"
  for k in search export locate; do
    s=$(grep '^STATUS' "$work/$k.out" | cut -d' ' -f2-)
    l=$(grep '^LAT' "$work/$k.out")
    get() { echo "$l" | grep -o "$1=[0-9.]*" | cut -d= -f2; }
    conns=$(case $k in search) echo 2;; *) echo 31;; esac)
    echo "| $k | $conns | $s | $(get p50) | $(get p99) | $(get max) | $(get n) | $(get errors) |"
  done
  echo
  echo "Server RSS: $rss_start MiB before, $rss_max MiB at most, $rss_end MiB after."
  fivexx=$(grep -h '^STATUS' "$work"/{search,export,locate}.out | grep -o ' 5[0-9][0-9]=[0-9]*' \
    | awk -F= '{s += $2} END {print s + 0}' || true)
  echo "5xx answers: ${fivexx:-0}."
} | tee -a "$report"
echo "load.sh: report in $report"
