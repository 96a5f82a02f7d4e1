#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for SECONDS each (default 600) and
# writes executions, executions per second, crashes and corpus size per target
# to bench/results/fuzz-<date>.md (or to $FUZZ_REPORT).
#
#   bash bench/fuzz.sh [SECONDS] [TARGET...]
#
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
# Corpora live in fuzz/corpus/<target> (not committed); the extractor targets
# are seeded from the vendored real transcripts (tests/shared/corpus). A
# crash leaves its input in fuzz/artifacts/<target>/ and fails the script.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
secs=${1:-600}
shift || true
report=${FUZZ_REPORT:-$root/bench/results/fuzz-$(date -u +%Y-%m-%d).md}

cargo +nightly --version >/dev/null 2>&1 || { echo "fuzz.sh: no nightly toolchain" >&2; exit 2; }
cargo +nightly fuzz --version >/dev/null 2>&1 || { echo "fuzz.sh: cargo-fuzz is not installed" >&2; exit 2; }

cd fuzz
cargo +nightly fuzz build || exit 1
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cargo +nightly fuzz list)

# Seeds: real transcripts for each extractor target.
seed() {
  local target=$1 dir=corpus/$1 src
  mkdir -p "$dir"
  case $target in
    extract_claude) src=claude-code ;;
    extract_codex) src=codex ;;
    extract_kimi) src=kimi ;;
    extract_pi) src=pi ;;
    extract_intendant) src=dsh ;;
    *) return 0 ;;
  esac
  [ -n "$(ls -A "$dir")" ] && return 0
  find "$root/tests/shared/corpus/$src" -type f \( -name '*.jsonl' -o -name '*.zst' \) -size -256k \
    -exec cp -t "$dir" {} + 2>/dev/null || true
}

mkdir -p "$(dirname "$report")"
{
  echo
  echo "## fuzz $(date -u +%Y-%m-%dT%H:%MZ): ${secs} s per target"
  echo
  echo "Machine: $(nproc) cores, $(rustc +nightly --version). \`bash bench/fuzz.sh $secs\`."
  echo
  echo "| target | seconds | executions | exec/s | crashes | corpus files |"
  echo "|---|---:|---:|---:|---:|---:|"
} >> "$report"

failed=0
for t in "${targets[@]}"; do
  seed "$t"
  log=$(mktemp)
  before=$(find "artifacts/$t" -type f 2>/dev/null | wc -l)
  start=$SECONDS
  cargo +nightly fuzz run "$t" -- -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 \
    -print_final_stats=1 >"$log" 2>&1
  rc=$?
  took=$((SECONDS - start))
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  after=$(find "artifacts/$t" -type f 2>/dev/null | wc -l)
  crashes=$((after - before))
  corpus=$(find "corpus/$t" -type f 2>/dev/null | wc -l)
  if [ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ]; then crashes="error (rc $rc)"; fi
  echo "| $t | $took | ${execs:-?} | ${rate:-?} | $crashes | $corpus |" >> "$report"
  echo "fuzz.sh: $t: ${execs:-?} executions in ${took}s, crashes: $crashes"
  if [ "$rc" -ne 0 ]; then
    failed=1
    tail -40 "$log" >&2
  fi
  rm -f "$log"
done
echo "fuzz.sh: report in $report"
exit $failed
