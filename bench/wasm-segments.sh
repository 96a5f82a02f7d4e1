#!/usr/bin/env bash
# wasm vs native search over the store's own segment files (issue 11 target:
# wasm ≤ 1.7× native). A generated home is indexed; `recall serve --no-index`
# serves it, and the manifest, segments and generations are fetched over HTTP
# exactly as the browser fetches them; then the same MemIndex (every
# generation and the served segments) answers the same requests natively
# (core/examples/segment_search.rs, release) and in the shipped pkg/ under
# Node's V8 (bench/wasm-segments.mjs). Writes bench/results/wasm-segments-<date>.md.
#
#   bash bench/wasm-segments.sh          # SIZE=60M ROUNDS=5; RECALL_BIN=target/debug/recall by default
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

cargo build --release -q -p recall-core --example segment_search
native=$(target/release/examples/segment_search "$data" "$queries" "$rounds")
wasm=$(node bench/wasm-segments.mjs "$data" "$queries" "$rounds")
out=bench/results/wasm-segments-$(date -u +%F).md
python3 - "$native" "$wasm" "$out" "$size" "$data" <<'PY'
import json, os, subprocess, sys, datetime, platform
n, w = json.loads(sys.argv[1]), json.loads(sys.argv[2])
out, size, data = sys.argv[3:6]
segs = os.listdir(os.path.join(data, "segments")); gens = os.listdir(os.path.join(data, "generations"))
sz = lambda d, fs: sum(os.path.getsize(os.path.join(data, d, f)) for f in fs) / 1e6
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
r = lambda k: w[k] / n[k] if n[k] else float("nan")
lines = [
  f"# wasm vs native search over the store's segments — {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC", "",
  f"Machine: {cpu}, {os.cpu_count()} cores, shared with other builds while measured (indicative). Node {node} (V8).",
  f"Home: gen.py --seed 3 --target-bytes {size}; {len(gens)} generations ({sz('generations', gens):.1f} MB), "
  f"{len(segs)} segments ({sz('segments', segs):.1f} MB) as served by `/api/index/segments`.",
  f"Both sides: `MemIndex` holding every generation and the served segments, frozen clock, "
  f"`search_json` (JSON in, JSON out) over the same {n['searches'] // max(1, int(os.environ.get('ROUNDS', '5')))} requests × "
  f"{os.environ.get('ROUNDS', '5')} rounds after a warming round.", "",
  "| engine | searches | p50 ms | p95 ms | mean ms | load ms |", "|---|---|---|---|---|---|",
  f"| native (release, core/examples/segment_search) | {n['searches']} | {n['p50_ms']:.3f} | {n['p95_ms']:.3f} | {n['mean_ms']:.3f} | {n['load_ms']:.0f} |",
  f"| wasm (shipped pkg/, Node V8) | {w['searches']} | {w['p50_ms']:.3f} | {w['p95_ms']:.3f} | {w['mean_ms']:.3f} | {w['load_ms']:.0f} |",
  "", f"wasm / native: p50 {r('p50_ms'):.2f}×, p95 {r('p95_ms'):.2f}×, mean {r('mean_ms'):.2f}× (target ≤ 1.7×).", "",
]
open(out, "w").write("\n".join(lines))
print("\n".join(lines))
PY
