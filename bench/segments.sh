#!/usr/bin/env bash
# Index segments benchmark (issue 11) on a generated home of SIZE (default
# 300M, gen.py seed 7) in WORK (default /tmp/recall-segments-bench):
#   1. full backfill (segments included): wall time and MB/s;
#   2. index size: segment bytes against the generation bytes they index;
#   3. warm search over the store.sh query mix (`recall bench-search`), with
#      the segments and again with `segments.json` moved aside (filters and
#      scans only), p50/p95 and partial answers;
#   4. one appended line: the segment and list bytes that sweep wrote.
# Writes bench/results/segments-<date>.md.
#
#   bash bench/segments.sh
#   SIZE=2G bash bench/segments.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SIZE=${SIZE:-300M}
WORK=${WORK:-/tmp/recall-segments-bench}
ROUNDS=${ROUNDS:-5}
bench_setup 7
store="$home/.recall/index/v1"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# 1. Backfill.
rm -rf "$home/.recall"
sync
t0=$(date +%s.%N)
run index --json > "$WORK/backfill.json"
t1=$(date +%s.%N)
wall=$(python3 -c "print(round($t1 - $t0, 2))")
read_mb=$(python3 -c "import json;print(round(json.load(open('$WORK/backfill.json'))['bytes_read']/1e6,1))")
mbps=$(python3 -c "print(round($read_mb/$wall,1))")
gen_bytes=$(du -sb "$store/generations" | cut -f1)
gen_json=$(find "$store/generations" -name '*.json' -printf '%s\n' | awk '{s+=$1} END {print s}')
seg_bytes=$(find "$store/segments" -name '*.seg' -printf '%s\n' | awk '{s+=$1} END {print s+0}')
nseg=$(python3 -c "import json;print(len(json.load(open('$store/segments.json'))['segments']))")
ratio=$(python3 -c "print(round($seg_bytes/$gen_json, 3))")

# 2–3. Warm search with and without segments (the store.sh query mix).
query_mix "$WORK/g/truth.jsonl" "$WORK/queries.jsonl"
nq=$(wc -l < "$WORK/queries.jsonl")
bench() { run bench-search --queries "$WORK/queries.jsonl" --rounds "$ROUNDS" > "$1"; }
stat_of() { python3 -c "import json;d=json.load(open('$1'));print(round(d['p50_ms'],2), round(d['p95_ms'],2), round(d['max_ms'],2), d['partial'])"; }
bench "$WORK/with.json"
mv "$store/segments.json" "$WORK/segments.json.aside"
bench "$WORK/without.json"
mv "$WORK/segments.json.aside" "$store/segments.json"
read -r w50 w95 wmax wpart <<< "$(stat_of "$WORK/with.json")"
read -r o50 o95 omax opart <<< "$(stat_of "$WORK/without.json")"
# 4. One appended line.
f=$(find "$home" -path '*pi*' -name '*.jsonl' -print -quit)
metas_before=$(find "$store/metas" -name '*.meta' | sort)
before=$(find "$store/segments" -name '*.seg' | sort)
last=$(tail -1 "$f")
printf '%s\n' "$last" | python3 -c "
import json,sys
d=json.loads(sys.stdin.read())
d['id']=d.get('id','x')+'z'
print(json.dumps(d))" >> "$f"
run index --json > "$WORK/append.json"
after=$(find "$store/segments" -name '*.seg' | sort)
new_seg=$(comm -13 <(echo "$before") <(echo "$after") | xargs -r stat -c %s | awk '{s+=$1} END {print s+0}')
list_bytes=$(stat -c %s "$store/segments.json")
catalog_bytes=$(stat -c %s "$store/catalog.json")
metas_after=$(find "$store/metas" -name '*.meta' | sort)
new_meta=$(comm -13 <(echo "$metas_before") <(echo "$metas_after") | xargs -r stat -c %s | awk '{s+=$1} END {print s+0}')
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

date_s=$(date -u +%Y-%m-%d)
out="$root/bench/results/segments-$date_s.md"
cat > "$out" <<EOF
# Index segments — $SIZE generated home (gen.py seed 7)

$(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')), load $load_before → $load_after
(other builds were running on this shared machine: figures are indicative). Release build of $(git -C "$root" rev-parse --short HEAD).

| figure | value |
|---|---|
| backfill (extraction + shards + segments) | $wall s, $read_mb MB read, $mbps MB/s |
| generations (shard JSON) | $((gen_json / 1048576)) MiB |
| segments | $nseg files, $((seg_bytes / 1048576)) MiB = **$ratio×** the shard JSON they index |
| warm search with segments ($nq queries × $ROUNDS) | p50 **$w50 ms**, p95 **$w95 ms**, max $wmax ms, partial $wpart |
| same without segments (filters + scans) | p50 $o50 ms, p95 $o95 ms, max $omax ms, partial $opart |
| one appended line: new segment bytes | $new_seg B (+ segments.json $list_bytes B) |
| one appended line: new meta + catalog bytes | $new_meta B + $catalog_bytes B |
EOF
cat "$out"
