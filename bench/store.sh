#!/usr/bin/env bash
# Store and indexer benchmark (DESIGN.md §6, issue 4) on a generated home of
# SIZE (default 2G, gen.py seed 7) in WORK (default /tmp/recall-store-bench,
# never in the repo):
#   1. full backfill: wall time, MB/s, CPU time and peak RSS (/usr/bin/time -v);
#   2. a sweep when nothing changed (median of 7 runs);
#   3. one incremental sweep after appending a line to 20 transcripts;
#   4. warm search: a fixed query mix (rare prose tokens, common words, a
#      phrase, folded Unicode, filters, scope=all, relevance, no match) timed
#      in one process against a warm arena (`recall bench-search`), p50/p95,
#      with that process's peak RSS.
# Writes bench/results/store-<date>.md (machine, load and date included).
#
#   bash bench/store.sh              # SIZE=2G
#   SIZE=300M bash bench/store.sh    # a quicker run
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SIZE=${SIZE:-2G}
WORK=${WORK:-/tmp/recall-store-bench}
ROUNDS=${ROUNDS:-5}
bench_setup 7
secs() { python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 3))" "$1" "$2"; }
field() { grep -F "$2" "$1" | head -1 | sed 's/.*: //'; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
src_bytes=$(du -sb --exclude=.recall "$home" | cut -f1)

# 1. Backfill.
rm -rf "$home/.recall"
sync
/usr/bin/time -v -o "$WORK/backfill.time" env "${HERMETIC[@]}" "$bin" --home "$home" --retention-days 0 index --json \
  > "$WORK/backfill.json"
wall=$(python3 -c "import json;print(json.load(open('$WORK/backfill.json'))['elapsed_ms']/1000)")
read_mb=$(python3 -c "import json;print(round(json.load(open('$WORK/backfill.json'))['bytes_read']/1e6,1))")
mbps=$(python3 -c "print(round($read_mb/$wall,1))")
bf_user=$(field "$WORK/backfill.time" "User time")
bf_sys=$(field "$WORK/backfill.time" "System time")
bf_rss=$(field "$WORK/backfill.time" "Maximum resident set size")
bf_cpu=$(field "$WORK/backfill.time" "Percent of CPU")
cpu_mbps=$(python3 -c "print(round($read_mb/($bf_user+$bf_sys)*2,1))")
sessions=$(python3 -c "import json;print(json.load(open('$WORK/backfill.json'))['new_sessions'])")
store_mb=$(du -sm "$home/.recall" | cut -f1)

# 2. No-change sweeps (after the backfill's writes reached the disk, so its
#    writeback is not charged to them).
sync
sleep 2
nochange=()
nc_cpu=()
for _ in 1 2 3 4 5 6 7; do
  t0=$(date +%s.%N)
  /usr/bin/time -f "%U %S" -o "$WORK/nochange.time" env "${HERMETIC[@]}" "$bin" --home "$home" --retention-days 0 index >/dev/null
  t1=$(date +%s.%N)
  nochange+=("$(secs "$t0" "$t1")")
  nc_cpu+=("$(awk '{print $1 + $2}' "$WORK/nochange.time")")
done
nc_median=$(printf '%s\n' "${nochange[@]}" | sort -n | sed -n 4p)
nc_cpu_median=$(printf '%s\n' "${nc_cpu[@]}" | sort -n | sed -n 4p)

# 3. Incremental: one line appended to 20 pi transcripts, twice. The first
#    sweep reads them whole (a backfill keeps no extraction checkpoints) and
#    checkpoints them as live; the second reads only the appended lines.
append() {
python3 - "$home" "$1" <<'PY'
import glob, json, os, sys
home, round_ = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(os.path.join(home, ".pi/agent/sessions/*/*.jsonl")))[:20]
for i, f in enumerate(files):
    with open(f, "a") as w:
        w.write(json.dumps({"type": "message", "id": f"bench{round_}{i:04d}", "parentId": None,
            "timestamp": "2026-10-25T00:00:00.000Z",
            "message": {"role": "user", "content": f"benchappend{round_}x{i} late line", "timestamp": 1792886400000}}) + "\n")
PY
}
append 1
t0=$(date +%s.%N); run index --json > "$WORK/incr1.json"; t1=$(date +%s.%N)
incr=$(secs "$t0" "$t1")
incr_read=$(python3 -c "import json;d=json.load(open('$WORK/incr1.json'));print(f\"{d['bytes_read']/1e6:.1f} MB read, {d['resumed']} resumed\")")
append 2
t0=$(date +%s.%N); run index --json > "$WORK/incr2.json"; t1=$(date +%s.%N)
incr2=$(secs "$t0" "$t1")
incr2_read=$(python3 -c "import json;d=json.load(open('$WORK/incr2.json'));print(f\"{d['bytes_read']} bytes read, {d['resumed']} of {d['updated_sessions']} resumed\")")

# 4. Warm search over a fixed query mix.
query_mix "$WORK/g/truth.jsonl" "$WORK/queries.jsonl"
nq=$(wc -l < "$WORK/queries.jsonl")
/usr/bin/time -v -o "$WORK/search.time" env "${HERMETIC[@]}" "$bin" --home "$home" --retention-days 0 \
  bench-search --queries "$WORK/queries.jsonl" --rounds "$ROUNDS" > "$WORK/search.json"
s_rss=$(field "$WORK/search.time" "Maximum resident set size")
p50=$(python3 -c "import json;print(round(json.load(open('$WORK/search.json'))['p50_ms'],2))")
p95=$(python3 -c "import json;print(round(json.load(open('$WORK/search.json'))['p95_ms'],2))")
pmax=$(python3 -c "import json;print(round(json.load(open('$WORK/search.json'))['max_ms'],2))")
first=$(python3 -c "import json;print(round(json.load(open('$WORK/search.json'))['first_round_ms'],1))")
partial=$(python3 -c "import json;d=json.load(open('$WORK/search.json'));print(d['partial'], 'of', d['searches'])")
arena=$(python3 -c "import json;a=json.load(open('$WORK/search.json'))['arena'];print(f\"{a['shards']} shards, {a['bytes']/2**20:.0f} MiB of {a['budget']/2**20:.0f} MiB\")")
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

date_s=$(date -u +%Y-%m-%d)
out="$root/bench/results/store-$date_s.md"
cat > "$out" <<MD
# Store benchmark — $date_s

\`bash bench/store.sh\` (SIZE=$SIZE, gen.py seed 7), $(date -u +%H:%M) UTC.
Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')), $(free -g | awk '/Mem:/{print $2}') GiB RAM,
$(uname -sr). Load average before / after: $load_before / $load_after (the machine is shared; wall times
include waiting for a core, CPU times do not).

Home: $(python3 -c "print(round($src_bytes/1e6))") MB of transcripts; $sessions sessions indexed (retention off).
Store after the backfill: $store_mb MB.

| measure | result | target |
|---|---|---|
| full backfill, wall | ${wall} s, **${mbps} MB/s** ($read_mb MB read) | ≥ 100 MB/s |
| full backfill, CPU | ${bf_user} s user + ${bf_sys} s sys ($bf_cpu of one core) ⇒ ${cpu_mbps} MB/s on 2 free cores | |
| backfill peak RSS | $((bf_rss / 1024)) MiB | ≤ 400 MiB |
| sweep, nothing changed (median of 7, whole process) | **$(python3 -c "print(round($nc_median*1000))") ms** wall, $(python3 -c "print(round($nc_cpu_median*1000))") ms CPU (wall: ${nochange[*]} s) | ≤ 100 ms |
| sweep after appending to 20 transcripts (first time: read whole, checkpointed) | $(python3 -c "print(round($incr*1000))") ms ($incr_read) | |
| the same after a second append (resumed from checkpoints) | $(python3 -c "print(round($incr2*1000))") ms ($incr2_read) | |
| warm search, $nq queries × $ROUNDS rounds | p50 **${p50} ms**, p95 **${p95} ms**, max ${pmax} ms; partial: $partial | p95 ≤ 50 ms |
| first (cold) round of the mix | ${first} ms in total | |
| search process peak RSS | $((s_rss / 1024)) MiB (arena: $arena) | ≤ 400 MiB |

Slowest queries of the mix (line of \`queries.jsonl\`: worst ms, partial answers over $ROUNDS rounds):
$(python3 -c "
import json
d = json.load(open('$WORK/search.json'))
q = open('$WORK/queries.jsonl').read().splitlines()
for s in d['slowest']:
    print(f\"- {s['line']}: {s['max_ms']:.0f} ms, {s['partial']} partial — \`{q[s['line'] - 1]}\`\")
")
MD
cat "$out"
