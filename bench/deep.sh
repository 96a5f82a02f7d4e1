#!/usr/bin/env bash
# Deep Search at scale: `recall grep -F` over a generated home's session
# files next to `rg -uuu -z -F` over the same files (the store excluded), on
# patterns that occur in few lines (both read everything), with wall time,
# MB/s of source bytes and peak RSS.
#
#   bash bench/deep.sh                 # SIZE=2G, gen.py seed 7
#   SIZE=300M bash bench/deep.sh       # a quick run
#
# Writes bench/results/deep-<SIZE>-<date>.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SIZE=${SIZE:-2G}
SEED=${SEED:-7}
WORK=${WORK:-/tmp/recall-expr-bench-$SIZE}
ROUNDS=${ROUNDS:-3}
bench_setup "$SEED"
command -v rg >/dev/null || { apt-get update -qq && apt-get install -y -qq ripgrep; }
if [ ! -f "$home/.recall/index/v1/segments.json" ]; then
  run index --json > "$WORK/backfill.json"
fi
src_bytes=$(du -sb --exclude=.recall "$home" | cut -f1)

# Patterns: three prose tokens of the truth file (one record each) and one
# string no line holds.
mapfile -t pats < <(python3 - "$WORK/g/truth.jsonl" <<'PY'
import json, re, sys
out = []
with open(sys.argv[1]) as f:
    for line in f:
        d = json.loads(line)
        if d["type"] == "record":
            m = re.search(r"u[0-9a-hjkmnp-tv-z]{10}", d["text"])
            if m and m.group(0) not in out:
                out.append(m.group(0))
        if len(out) == 3:
            break
print("\n".join(out + ["zzqxv-nothing-holds-this"]))
PY
)

measure() { # measure OUT CMD…: wall seconds and peak RSS KiB of the best of ROUNDS
  local best="" rss="" out=$1
  shift
  for _ in $(seq "$ROUNDS"); do
    /usr/bin/time -f "%e %M" -o "$WORK/t" "$@" > "$out" 2>/dev/null || true
    read -r s m < <(tail -1 "$WORK/t")
    if [ -z "$best" ] || awk "BEGIN{exit !($s < $best)}"; then best=$s rss=$m; fi
  done
  echo "$best $rss"
}

results="$root/bench/results/deep-$SIZE-$(date -u +%Y-%m-%d).md"
{
  echo "# Deep Search at $SIZE: recall grep -F against rg -uuu -z -F"
  echo
  echo "$(date -u +%Y-%m-%d), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')). \`bash bench/deep.sh\` (SIZE=$SIZE, seed $SEED), release build, page cache warm (best of $ROUNDS runs each). Source files: $((src_bytes / 1000000)) MB (the home without its store). \`recall grep -F P --max-results 100000 --json\` over every session's files; \`rg -uuu -z -F P HOME --glob '!.recall'\` over the same files."
  echo
  echo "| pattern | recall s | recall MB/s | recall peak RSS MiB | rg s | rg MB/s | rg peak RSS MiB | recall / rg | matching lines (recall, rg) |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---|"
  for p in "${pats[@]}"; do
    read -r rs rm < <(measure "$WORK/recall.out" env "${HERMETIC[@]}" "$bin" --home "$home" --retention-days 0 grep -F "$p" --max-results 100000 --json)
    read -r gs gm < <(measure "$WORK/rg.out" rg -uuu -z -F "$p" "$home" --glob '!.recall')
    rl=$(python3 -c "import json,sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d.get('type') == 'done': print(d['summary']['sessions'], 'sessions,', d['summary']['hits'], 'lines')" "$WORK/recall.out")
    gl=$(wc -l < "$WORK/rg.out")
    python3 - "$p" "$rs" "$rm" "$gs" "$gm" "$src_bytes" "$rl" "$gl" <<'PY'
import sys
p, rs, rm, gs, gm, b, rl, gl = sys.argv[1:]
rs, gs, b = float(rs), float(gs), int(b)
mbs = lambda s: f"{b / 1e6 / s:.0f}" if s > 0 else "∞"
ratio = f"{rs / gs:.2f}×" if gs > 0 else "–"
print(f"| `{p}` | {rs:.2f} | {mbs(rs)} | {int(rm) / 1024:.0f} | {gs:.2f} | {mbs(gs)} | {int(gm) / 1024:.0f} | {ratio} | {rl}; rg {gl} lines |")
PY
  done
} > "$results"
echo "deep.sh: wrote $results"
