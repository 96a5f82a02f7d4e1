#!/usr/bin/env bash
# Fault bench (issue #12): runs the SIGKILL crash test ROUNDS times (each
# round = 200 kills during extraction, publish, generation writes and
# segment writes/merges: 5 rounds = 1,000 kills), the file and store fault
# tests, and measures the peak RSS of indexing a zstd bomb (a ~100 KB
# `.jsonl.zst` rollout that inflates to 1.2 GB / 8.1 M user lines; the
# per-session bounds must keep it <= 256 MiB). Writes
# bench/results/faults-<date>.md (or $FAULTS_REPORT).
#
#   bash bench/faults.sh [ROUNDS]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
rounds=${1:-5}
report=${FAULTS_REPORT:-$root/bench/results/faults-$(date -u +%Y-%m-%d).md}
tmp=$(mktemp -d /tmp/recall-faults.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

cargo build -p recall-host --bin recall >/dev/null 2>&1 || { echo "faults.sh: build failed" >&2; exit 1; }
bin=$root/target/debug/recall

{
  echo "# Fault bench $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "Machine: $(nproc) cores; debug build."
  echo
  echo "## SIGKILL ($rounds × 200 kills, host/tests/store_crash.rs)"
  echo
  echo "| round | result | seconds |"
  echo "|---|---|---|"
} >"$report"
fail=0
for i in $(seq 1 "$rounds"); do
  start=$(date +%s.%N)
  if cargo test -q -p recall-host --test store_crash >"$tmp/crash.log" 2>&1; then r=ok; else r=FAILED; fail=1; fi
  end=$(date +%s.%N)
  printf '| %d | %s | %.1f |\n' "$i" "$r" "$(echo "$end - $start" | bc)" >>"$report"
done

{
  echo
  echo "## File and store faults"
  echo
  for t in fault_files fault_store fault_bounds store_limits; do
    if cargo test -q -p recall-host --test "$t" >"$tmp/$t.log" 2>&1; then r=ok; else r=FAILED; fail=1; fi
    echo "- $t: $r ($(grep -o '[0-9]* passed' "$tmp/$t.log" | tail -1))"
  done
} >>"$report"

# The zstd bomb.
home=$tmp/bomb
day=$home/.codex/sessions/2026/01/01
mkdir -p "$day"
python3 - <<'PY' | zstd -q -19 --long=27 -T2 -o "$day/rollout-2026-01-01T00-00-00-019b64e5-57fa-7463-b644-fba7e456f906.jsonl.zst"
import sys
w = sys.stdout.write
w('{"timestamp":"2026-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"019b64e5-57fa-7463-b644-fba7e456f906","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}}\n')
line = '{"timestamp":"2026-01-01T00:00:01.000Z","type":"event_msg","payload":{"type":"user_message","message":"hello there, a prompt repeated over and over"}}\n'
chunk = line * 10000
for _ in range(810):
    w(chunk)
PY
zst_bytes=$(stat -c %s "$day"/*.zst)
/usr/bin/time -v "$bin" --home "$home" --retention-days 0 index --json >"$tmp/bomb.json" 2>"$tmp/bomb.time"
rss_kb=$(awk -F: '/Maximum resident/ {gsub(/ /,"",$2); print $2}' "$tmp/bomb.time")
wall=$(awk '/Elapsed \(wall clock\)/ {print $NF}' "$tmp/bomb.time")
truncated=$("$bin" --home "$home" --retention-days 0 status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["truncated_sessions"])')
store=$(du -sh "$home/.recall" | cut -f1)
{
  echo
  echo "## Zstd bomb"
  echo
  echo "- input: $zst_bytes bytes of zstd, 1.19 GB / 8,100,001 lines decompressed"
  echo "- peak RSS of \`recall index\`: $((rss_kb / 1024)) MiB (bound 256 MiB); wall $wall"
  echo "- truncated_sessions: $truncated; store size $store"
} >>"$report"
[ "$rss_kb" -le $((256 * 1024)) ] || fail=1
cat "$report"
exit $fail
