#!/usr/bin/env bash
# wasm vs native search over the store's own segment files (issue 11 target:
# wasm ≤ 1.7× native). A generated home is indexed; `recall serve --no-index`
# serves it, and the manifest, segments and generations are fetched over HTTP
# exactly as the browser fetches them; then the same MemIndex (every
# generation and the served segments) answers the same requests natively
# (core/examples/segment_search.rs, release), in the shipped pkg/ under
# Node's V8 (bench/wasm-segments.mjs) and in headless Chromium
# (bench/wasm-segments-chromium.mjs, skipped without /usr/bin/chromium and
# tests/browser/node_modules). The three run one after another REPS times, so
# a shared machine's swings hit every engine alike; the table gives the
# median over the repetitions, the ratios the median of each repetition's
# ratio. Writes bench/results/wasm-segments-<date>.md (or $OUT).
#
#   bash bench/wasm-segments.sh   # SIZE=60M ROUNDS=5 REPS=3; RECALL_BIN=target/debug/recall by default
#   RECALL_PKG=/other/pkg NATIVE=/other/segment_search bash bench/wasm-segments.sh   # another build
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
size=${SIZE:-60M}
rounds=${ROUNDS:-5}
bin=${RECALL_BIN:-target/debug/recall}
work=${WORK:-/tmp/recall-bench-wasm-segments-$size}
mkdir -p "$work" bench/results
[ -x "$bin" ] || cargo build -p recall-host
if [ ! -f "$work/truth.jsonl" ]; then
  python3 tests/shared/corpus-gen/gen.py --out "$work" --seed 3 --target-bytes "$size" --force >/dev/null
fi
home=$work/home
"$bin" --home "$home" --retention-days 0 index >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin" --home "$home" --retention-days 0 serve --bind "127.0.0.1:$port" --no-index 2>"$work/serve.log" &
serve_pid=$!
trap 'kill "$serve_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$port/api/index/status" >/dev/null && break
  sleep 0.2
done
api="http://127.0.0.1:$port/api/index"
data=$work/served
rm -rf "$data" && mkdir -p "$data/segments" "$data/generations"
curl -sf "$api/manifest" -o "$data/manifest.json"
curl -sf "$api/segments" | python3 -c 'import json,sys; print("\n".join(s["name"] for s in json.load(sys.stdin)["segments"]))' > "$data/segments.txt"
while read -r s; do curl -sf "$api/segments/$s" -o "$data/segments/$s"; done < "$data/segments.txt"
python3 -c 'import json,sys; print("\n".join(sorted({e["generation_file"] for e in json.load(open(sys.argv[1]))["sessions"].values()})))' "$data/manifest.json" |
  while read -r g; do curl -sf "$api/generations/$g" -o "$data/generations/$g"; done
kill "$serve_pid" 2>/dev/null || true

queries=$work/queries.jsonl
(cd tests/browser && node -e '
  import("./lib/requests.mjs").then(({ requestMix }) => {
    const mix = requestMix(40).filter((r) => r.q && r.q.trim().length >= 2 && !r.q.includes(" b c d"));
    process.stdout.write(mix.map((r) => JSON.stringify(r)).join("\n") + "\n");
  });') > "$queries"

native_bin=${NATIVE:-target/release/examples/segment_search}
[ -n "${NATIVE:-}" ] || cargo build --release -q -p recall-core --example segment_search
reps=${REPS:-3}
runs=$work/runs
rm -rf "$runs" && mkdir -p "$runs"
chromium=no
if [ -x /usr/bin/chromium ] && [ -d tests/browser/node_modules/playwright-core ]; then chromium=yes; fi
for i in $(seq 1 "$reps"); do
  "$native_bin" "$data" "$queries" "$rounds" > "$runs/native-$i.json"
  node bench/wasm-segments.mjs "$data" "$queries" "$rounds" > "$runs/node-$i.json"
  if [ $chromium = yes ]; then
    node bench/wasm-segments-chromium.mjs "$data" "$queries" "$rounds" > "$runs/chromium-$i.json"
    RECALL_API=object node bench/wasm-segments-chromium.mjs "$data" "$queries" "$rounds" > "$runs/chromium-object-$i.json"
  fi
done
load=$(cut -d' ' -f1-3 /proc/loadavg)
out=${OUT:-bench/results/wasm-segments-$(date -u +%F).md}
python3 - "$runs" "$reps" "$out" "$size" "$data" "$load" <<'PY'
import json, math, os, subprocess, sys, datetime, platform, statistics as st
runs, reps, out, size, data, load = sys.argv[1], int(sys.argv[2]), *sys.argv[3:7]
def get(kind):
    fs = [os.path.join(runs, f"{kind}-{i}.json") for i in range(1, reps + 1)]
    return [json.load(open(f)) for f in fs if os.path.exists(f)]
native = get("native")
engines = [("native (release, core/examples/segment_search)", native),
           ("wasm, Node V8 (bench/wasm-segments.mjs)", get("node")),
           ("wasm, headless Chromium (bench/wasm-segments-chromium.mjs)", get("chromium")),
           ("wasm, headless Chromium, `search` (JS objects, the dashboard's call)", get("chromium-object"))]
segs = os.listdir(os.path.join(data, "segments")); gens = os.listdir(os.path.join(data, "generations"))
sz = lambda d, fs: sum(os.path.getsize(os.path.join(data, d, f)) for f in fs) / 1e6
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
chrome = next((r["browser"] for r in get("chromium")), "not run")
med = lambda rs, k: st.median(r[k] for r in rs)
ratio = lambda rs, k: st.median(w[k] / n[k] for w, n in zip(rs, native) if n[k])
per = len(native[0]["per_request_p50_ms"])
# Each request's median over every repetition, then that request's wasm / native ratio: the pooled p50 of a
# 38-request mix can fall across a gap between requests and swing on a small shift, these do not.
req = lambda rs: [st.median(r["per_request_p50_ms"][j] for r in rs) for j in range(per)]
def per_request(rs):
    rs_ = [w / n for w, n in zip(req(rs), req(native)) if n]
    return st.median(rs_), math.exp(sum(map(math.log, rs_)) / len(rs_))
lines = [
  f"# wasm vs native search over the store's segments — {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC", "",
  f"Machine: {cpu}, {os.cpu_count()} cores, shared with other builds while measured; load average at the end {load}. "
  f"Node {node}; Chromium {chrome}.",
  f"Home: gen.py --seed 3 --target-bytes {size}; {len(gens)} generations ({sz('generations', gens):.1f} MB), "
  f"{len(segs)} segments ({sz('segments', segs):.1f} MB) as served by `/api/index/segments`.",
  f"Every engine: `MemIndex` holding every generation and the served segments, frozen clock, "
  f"`searchJson` (JSON in, JSON out; the last row `search`) over the same {per} requests × "
  f"{os.environ.get('ROUNDS', '5')} rounds after a warming round; {reps} repetitions, engines interleaved. "
  f"Figures are medians over the repetitions; ratios are the median of each repetition's ratio to native.", "",
  "| engine | p50 ms | p95 ms | mean ms | load ms | p50 / native | mean / native | per-request ratio: median, geomean |",
  "|---|---|---|---|---|---|---|---|",
]
for name, rs in engines:
    if not rs:
        continue
    r = "" if rs is native else f"{ratio(rs, 'p50_ms'):.2f}×"
    m = "" if rs is native else f"{ratio(rs, 'mean_ms'):.2f}×"
    q = "" if rs is native else "{:.2f}×, {:.2f}×".format(*per_request(rs))
    lines.append(f"| {name} | {med(rs, 'p50_ms'):.3f} | {med(rs, 'p95_ms'):.3f} | {med(rs, 'mean_ms'):.3f} | {med(rs, 'load_ms'):.0f} | {r} | {m} | {q} |")
lines += ["", "Target: wasm ≤ 1.7× native.", ""]
open(out, "w").write("\n".join(lines))
print("\n".join(lines))
PY
