#!/usr/bin/env bash
# HTTP load benchmark of `recall serve` (DESIGN.md §7, issue 5): a generated
# home of SIZE (default 2G, gen.py seed 5) indexed into its own store, then
# served with the indexer running, loaded with wrk (Debian's, installed when
# missing) by a fixed query mix at concurrency 2 and 16, then RSS sampled
# while at least 10,000 more requests run. Only 127.0.0.1 is ever loaded;
# every run is bounded in time. Writes bench/results/http-<date>.md.
#
#   bash bench/http.sh                 # SIZE=2G WORK=/tmp/recall-http-bench
#   SIZE=300M bash bench/http.sh       # a quicker run
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SIZE=${SIZE:-2G}
WORK=${WORK:-/tmp/recall-http-bench}
PORT=${PORT:-17980}
DUR=${DUR:-30}
SERVE_FLAGS=${SERVE_FLAGS:-}   # e.g. "--arena-mib 2048" or "--no-index"

if ! command -v wrk >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
fi
bench_setup 5

rm -rf "$home/.recall"
t0=$(date +%s.%N)
run index >/dev/null 2>"$WORK/index.log"
t1=$(date +%s.%N)
index_s=$(python3 -c "print(round($t1-$t0,1))")

# Started directly (not through a function) so $! is the server's own pid.
env "${HERMETIC[@]}" "$bin" --home "$home" --retention-days 0 \
  serve --bind "127.0.0.1:$PORT" $SERVE_FLAGS 2>"$WORK/serve.log" &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$PORT/api/index/status" >/dev/null && break
  sleep 0.2
done

# The query mix: rare prose tokens (one hit each), common words, a phrase,
# folded Unicode, filters, scope=all with a tool token, relevance, no match.
python3 - "$WORK/g/truth.jsonl" "$WORK/paths.txt" <<'PY'
import json, re, sys, urllib.parse
truth, out = sys.argv[1:3]
prose, tools = [], []
with open(truth) as f:
    for line in f:
        d = json.loads(line)
        if d["type"] == "record" and len(prose) < 40:
            m = re.search(r"u[0-9a-hjkmnp-tv-z]{10}", d["text"])
            if m: prose.append(m.group(0))
        elif d["type"] == "tool_token" and len(tools) < 10:
            tools.append(d["token"])
        if len(prose) >= 40 and len(tools) >= 10:
            break
qs = [{"q": t} for t in prose[:20]]
qs += [{"q": w} for w in ["error", "cargo test", "config", "migration", "timeout", "panic", "the"]]
qs += [{"q": '"cargo test"'}, {"q": "straße"}, {"q": "σίσυφος"}, {"q": "数据库"}, {"q": "cafés"}, {"q": "don't"}]
qs += [{"q": "error", "source": "codex"}, {"q": "config", "role": "user"}, {"q": "test", "sort": "relevance"},
       {"q": "panic", "include_superseded": "false"}, {"q": "error", "subagents": "false", "limit": "5"}]
qs += [{"q": t, "scope": "all"} for t in tools[:5]]
qs += [{"q": t, "sort": "relevance"} for t in prose[20:30]]
qs += [{"q": "qqzzxxnotthere"}, {"q": "zzyzx quux"}]
with open(out, "w") as f:
    for q in qs:
        f.write("/api/sessions/message-search?" + urllib.parse.urlencode(q) + "\n")
print(len(qs), "queries in the mix", file=sys.stderr)
PY
cat > "$WORK/mix.lua" <<LUA
local paths = {}
for line in io.lines("$WORK/paths.txt") do paths[#paths + 1] = line end
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i % #paths) + 1])
end
LUA

# Warm the arena once (every query), then measure.
while read -r p; do curl -s -o /dev/null "http://127.0.0.1:$PORT$p"; done < "$WORK/paths.txt"
rss() { awk '/VmRSS/ {print $2}' "/proc/$pid/status"; }
for c in 2 16; do
  wrk -t2 -c$c -d${DUR}s --latency -s "$WORK/mix.lua" "http://127.0.0.1:$PORT" > "$WORK/wrk-c$c.txt"
done
# RSS over at least 10,000 requests at concurrency 2 (bounded: 120 s).
: > "$WORK/rss.txt"
wrk -t2 -c2 -d120s --latency -s "$WORK/mix.lua" "http://127.0.0.1:$PORT" > "$WORK/wrk-rss.txt" &
wpid=$!
while kill -0 $wpid 2>/dev/null; do rss >> "$WORK/rss.txt"; sleep 2; done
wait $wpid || true
# Live: the same load while an agent appends a line per second to a large
# Claude Code transcript (a copy of the home's largest, under a new session
# id), so searches pay for refreshes: focused sweeps that resume the session.
big=$(find "$home/.claude/projects" -name '*.jsonl' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2-)
sid=$(python3 -c "import uuid; print(uuid.uuid4())")
live="$(dirname "$big")/$sid.jsonl"
cp "$big" "$live"
sleep 2
(
  for i in $(seq "$DUR"); do
    printf '{"type":"user","uuid":"%s","sessionId":"%s","timestamp":"2026-10-25T10:00:%02d.000Z","message":{"role":"user","content":"live bench line %s"}}\n' \
      "$(python3 -c 'import uuid; print(uuid.uuid4())')" "$sid" $((i % 60)) "$i" >> "$live"
    sleep 1
  done
) &
apid=$!
wrk -t2 -c2 -d${DUR}s --latency -s "$WORK/mix.lua" "http://127.0.0.1:$PORT" > "$WORK/wrk-live.txt"
wait $apid || true
live_bytes=$(stat -c %s "$live")
rm -f "$live"
echo "$live_bytes" > "$WORK/live-bytes.txt"
sweeps=$(grep -c "sweep failed" "$WORK/serve.log" || true)
# The same mix in one process without HTTP (recall bench-search, same arena
# budget as the server's default), to separate the search core from the server.
python3 - "$WORK/paths.txt" "$WORK/q.jsonl" <<'PY'
import json, sys, urllib.parse
with open(sys.argv[2], "w") as out:
    for line in open(sys.argv[1]):
        out.write(json.dumps(dict(urllib.parse.parse_qsl(line.strip().split("?", 1)[1]))) + "\n")
PY
run bench-search --queries "$WORK/q.jsonl" --rounds 3 > "$WORK/inproc.json" 2>/dev/null || echo '{}' > "$WORK/inproc.json"

date=$(date -u +%Y-%m-%d)
out="$root/bench/results/http-$date.md"
mkdir -p "$root/bench/results"
python3 - "$WORK" "$out" "$SIZE" "$index_s" "$sweeps" "$SERVE_FLAGS" <<'PY'
import json, os, re, subprocess, sys, datetime
work, out, size, index_s, sweeps, flags = sys.argv[1:7]
def parse(path):
    t = open(path).read()
    def ms(label):
        m = re.search(r"^\s*%s\s+([\d.]+)(us|ms|s)\s*$" % re.escape(label), t, re.M)
        if not m: return float("nan")
        v, u = float(m.group(1)), m.group(2)
        return v / 1000 if u == "us" else v * 1000 if u == "s" else v
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1))
    n = int(re.search(r"(\d+) requests in", t).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", t)
    return ms("50%"), ms("99%"), rps, n, int(non2xx.group(1)) if non2xx else 0
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
mem = next((int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemTotal")), 0) // 1024
rss = [int(x) for x in open(os.path.join(work, "rss.txt")).read().split()]
home_bytes = int(subprocess.run(["du", "-sb", os.path.join(work, "g/home")], capture_output=True, text=True).stdout.split()[0])
nq = sum(1 for _ in open(os.path.join(work, "paths.txt")))
L = [f"# HTTP load benchmark — {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC", "",
     f"Machine: {cpu}, {os.cpu_count()} cores, {mem} MiB RAM (shared with other work while it ran).",
     f"Home: gen.py seed 5, target {size} ({home_bytes/1e9:.2f} GB on disk); `recall index` backfill {index_s} s.",
     "Server: `" + ("recall serve " + flags).strip() + "` (release; unless `--no-index`, the indexer runs (query-time refresh after 1 s, sweeps every 30 s); "
     f"load: wrk 4.1, 2 threads, {nq} queries round-robin (rare prose tokens, common words, a phrase, folded Unicode, "
     "filters, scope=all tool tokens, relevance, no-match), after one warm-up pass.", "",
     "| concurrency | requests | p50 ms | p99 ms | req/s | non-2xx (429 busy) |", "|---|---|---|---|---|---|"]
for c in (2, 16):
    p50, p99, rps, n, bad = parse(os.path.join(work, f"wrk-c{c}.txt"))
    L.append(f"| {c} | {n} | {p50:.2f} | {p99:.2f} | {rps:.0f} | {bad} |")
p50, p99, rps, n, bad = parse(os.path.join(work, "wrk-live.txt"))
live_mb = int(open(os.path.join(work, "live-bytes.txt")).read()) / 1e6
L.append(f"| 2, an agent appending a line per second to a {live_mb:.1f} MB transcript | {n} | {p50:.2f} | {p99:.2f} | {rps:.0f} | {bad} |")
p50, p99, rps, n, bad = parse(os.path.join(work, "wrk-rss.txt"))
L += ["", f"RSS over {n} requests at concurrency 2 (p50 {p50:.2f} ms, p99 {p99:.2f} ms, {bad} non-2xx): "
      f"first {rss[0]//1024} MiB, last {rss[-1]//1024} MiB, min {min(rss)//1024} MiB, max {max(rss)//1024} MiB "
      f"({len(rss)} samples, every 2 s).", f"Failed sweeps logged while serving: {sweeps}.", "",
      ]
ip = json.load(open(os.path.join(work, "inproc.json")))
if ip:
    L += [f"In-process, no HTTP (`recall bench-search`, same mix, 3 warm rounds, default arena): p50 {ip.get('p50_ms', 0):.2f} ms, "
          f"p95 {ip.get('p95_ms', 0):.2f} ms, max {ip.get('max_ms', 0):.2f} ms; {ip.get('partial', 0)} of {ip.get('searches', 0)} answers partial; "
          f"arena {ip.get('arena', {}).get('shards', '?')} shards / {ip.get('arena', {}).get('bytes', 0) // 1048576} MiB.", ""]
L += ["Targets at concurrency 2: p50 ≤ 10 ms, p99 ≤ 60 ms; RSS flat over 10,000 requests."]
open(out, "w").write("\n".join(L) + "\n")
print("\n".join(L))
PY
