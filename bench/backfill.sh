#!/usr/bin/env bash
# Full-backfill throughput (issue 11 target: ≥ 250 MB/s on this machine):
# `recall index` from an empty store, RUNS times per binary, each into a
# store folder of its own (RECALL_HOME) that nothing was ever deleted from.
#
#   bash bench/backfill.sh                         # SIZE=2G, gen.py seed 7
#   SIZE=1G bash bench/backfill.sh
#   BINS="/tmp/recall-before /tmp/recall-after" bash bench/backfill.sh
#   HOME_DIR=/path/to/generated/home bash bench/backfill.sh   # an existing home (read only)
#
# Why fresh folders: this file system is ext4 without a journal, where a new
# inode is not taken from the ones freed in the last 60 s (6 min while their
# inode-table block is dirty); `rm -rf` of a store just before a backfill
# makes every file the backfill creates scan those thousands of inodes (15–20 %
# of its CPU in the kernel, measured). A first backfill never follows such a
# delete. The stores are deleted at the end, all at once.
#
# MB/s = transcript bytes / wall time. Wall times include waiting for a core
# on a shared machine, so CPU time (user + sys) and "MB/s of CPU on 2 cores"
# (2 × bytes / CPU seconds: the wall rate two free cores would give if the
# run kept both busy) are reported beside them, with the load average.
#
# Writes bench/results/backfill-<SIZE>-<date>.md (DATE=YYYY-MM-DD to name another day).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SIZE=${SIZE:-2G}
SEED=${SEED:-7}
RUNS=${RUNS:-3}
WORK=${WORK:-/tmp/recall-backfill-bench-$SIZE}
if [ -n "${HOME_DIR:-}" ]; then
  cd "$root"
  home=$HOME_DIR
  mkdir -p "$WORK"
else
  bench_setup "$SEED"
fi
BINS=${BINS:-${bin:-$target_dir/release/recall}}
[ -x "${BINS%% *}" ] || { cargo build --release -q -p recall-host; }

src_bytes=$(find "$home" -path "$home/.recall" -prune -o -type f -name '*.jsonl' -printf '%s\n' |
  awk '{s+=$1} END{print s}')
stores="$WORK/stores"
mkdir -p "$stores"
rows=""
for run in $(seq "$RUNS"); do
  for b in $BINS; do
    store="$stores/$(basename "$b")-$run-$$"
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    /usr/bin/time -f "%e %U %S %P %M" -o "$WORK/time" \
      env "${HERMETIC[@]}" RECALL_HOME="$store" "$b" --home "$home" --retention-days 0 index --json \
      > "$WORK/backfill.json"
    read -r wall user sys cpu rss < "$WORK/time"
    sessions=$(python3 -c "import json;print(json.load(open('$WORK/backfill.json'))['new_sessions'])")
    segs=$(python3 -c "import json;print(len(json.load(open('$store/index/v1/segments.json'))['segments']))")
    row=$(python3 - "$src_bytes" "$wall" "$user" "$sys" "$cpu" "$rss" <<'PY'
import sys
b, wall, user, sys_, cpu, rss = sys.argv[1:]
b, wall, cpu_s = int(b), float(wall), float(user) + float(sys_)
print(f"{wall:.2f} | {user} + {sys_} = {cpu_s:.2f} | {cpu} | {b / 1e6 / wall:.0f} | "
      f"{2 * b / 1e6 / cpu_s:.0f} | {int(rss) // 1024}")
PY
)
    rows+="| $(basename "$b") | $run | $load | $row | $sessions | $segs |"$'\n'
    echo "$(basename "$b") run $run: $row"
  done
done
rm -rf "$stores"

out="$root/bench/results/backfill-$SIZE-${DATE:-$(date -u +%F)}.md"
{
  echo "# Full backfill — $SIZE"
  echo
  echo "\`bash bench/backfill.sh\` at $(git -C "$root" rev-parse --short HEAD). Machine: $(nproc) cores" \
    "($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(free -g | awk '/Mem/{print $2}') GB RAM," \
    "shared with other engineers' builds and tests (see the load averages)."
  echo "Home: $home, $(python3 -c "print(round($src_bytes/1e6))") MB of transcripts. Each run: an empty store folder of its own."
  echo
  echo "| binary | run | load avg | wall s | CPU s (user + sys) | CPU % | MB/s (wall) | MB/s of CPU on 2 cores | peak RSS MiB | sessions | live segments |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s' "$rows"
} > "$out"
echo "wrote $out"
