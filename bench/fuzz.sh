#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for SECONDS each (default 600) and
# writes executions, executions per second, crashes and corpus size per target
# to bench/results/fuzz-<date>.md (or to $FUZZ_REPORT).
#
#   bash bench/fuzz.sh [SECONDS] [TARGET...]
#
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
# Corpora live in fuzz/corpus/<target> (not committed); the extractor targets
# are seeded from the vendored real transcripts (tests/shared/corpus), the
# Intendant one and the store readers (segment, grams_sidecar, policy,
# indexer_state, ledger, catalog, meta, manifest, report_payload) from a home the vendored generator
# writes and `recall` indexes once (under /tmp, removed at the end). A crash
# leaves its input in fuzz/artifacts/<target>/ and fails the script.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
secs=${1:-600}
shift || true
report=${FUZZ_REPORT:-$root/bench/results/fuzz-$(date -u +%Y-%m-%d).md}

cargo +nightly --version >/dev/null 2>&1 || { echo "fuzz.sh: no nightly toolchain" >&2; exit 2; }
cargo +nightly fuzz --version >/dev/null 2>&1 || { echo "fuzz.sh: cargo-fuzz is not installed" >&2; exit 2; }

cd fuzz
targets=("$@")
if [ ${#targets[@]} -gt 0 ]; then
  # Only what is asked for (a sanitizer link per target is slow).
  for t in "${targets[@]}"; do cargo +nightly fuzz build "$t" || exit 1; done
else
  cargo +nightly fuzz build || exit 1
  mapfile -t targets < <(cargo +nightly fuzz list)
fi

# A generated home (Intendant included), indexed once by `recall` with a
# policy and a report: the seeds of the store readers.
gen=""
generated() {
  [ -n "$gen" ] && return 0
  gen=$(mktemp -d /tmp/recall-fuzz-seed.XXXXXX)
  python3 "$root/tests/shared/corpus-gen/gen.py" --out "$gen/int" --seed 13 --sessions 16 \
    --sources intendant >/dev/null 2>&1
  python3 "$root/tests/shared/corpus-gen/gen.py" --out "$gen" --seed 12 --sessions 6 --days 30 \
    >/dev/null 2>&1 || return 0
  local recall=(cargo run -q --manifest-path "$root/Cargo.toml" -p recall-host --bin recall --)
  (cd "$root" && "${recall[@]}" --home "$gen/home" --retention-days 0 index >/dev/null 2>&1 &&
    "${recall[@]}" --home "$gen/home" report --query the -o "$gen/report.html" >/dev/null 2>&1) || true
}
trap '[ -n "$gen" ] && rm -rf "$gen"' EXIT

# Seeds: real transcripts for each extractor target, store files for the
# store readers.
seed() {
  local target=$1 dir=corpus/$1 src store
  mkdir -p "$dir"
  [ -n "$(ls -A "$dir")" ] && return 0
  case $target in
    extract_claude) src=claude-code ;;
    extract_codex) src=codex ;;
    extract_kimi) src=kimi ;;
    extract_pi) src=pi ;;
    extract_dsh) src=dsh ;;
    extract_qwen) src=qwen ;;
    extract_copilot) src=copilot-cli ;;
    extract_gemini)
      cp "$root/host/tests/fixtures/next-agents/gemini-replay.jsonl" "$dir/"
      return 0 ;;
    extract_opencode)
      cp "$root/host/tests/fixtures/opencode/opencode.sql" "$dir/"
      return 0 ;;
    extract_intendant)
      generated
      find "$gen/int/home/.intendant" -name session.jsonl -size -256k 2>/dev/null | head -40 |
        while read -r f; do cp "$f" "$dir/$(basename "$(dirname "$f")").jsonl"; done
      return 0 ;;
    segment | grams_sidecar | policy | indexer_state | manifest | report_payload | catalog | meta | ledger)
      generated
      store=$gen/home/.recall/index/v1
      case $target in
        segment) find "$store" -path '*segments*' -type f ! -name '*.json' -size -4M -exec cp -t "$dir" {} + ;;
        grams_sidecar) find "$store" -name '*.grams' -size -256k | head -40 | xargs -r cp -t "$dir" ;;
        policy) find "$store" -name policy.json -exec cp -t "$dir" {} + ;;
        indexer_state) find "$store" -name indexer.json -exec cp -t "$dir" {} + ;;
        catalog) find "$store" -maxdepth 1 -name 'catalog.json' -exec cp -t "$dir" {} + ;;
        meta) find "$store" -path '*metas*' -name '*.meta' -size -4M | head -40 | xargs -r cp -t "$dir" ;;
        ledger) find "$store" -maxdepth 1 -name 'ledger.jsonl' -exec cp -t "$dir" {} + ;;
        manifest) find "$store" -maxdepth 1 -name 'manifest.json' -exec cp -t "$dir" {} + ;;
        report_payload)
          [ -f "$gen/report.html" ] && python3 - "$gen/report.html" "$dir" <<'PY'
import base64, gzip, json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
for text in re.findall(r'<script type="application/x-recall-data">(.*?)</script>', html, re.S):
    try:
        payload = json.loads(gzip.decompress(base64.b64decode(text.strip())))
    except Exception:
        continue  # the viewer's wasm, not the payload
    open(sys.argv[2] + "/report.b64", "w").write(text.strip())
    payload["generations"] = payload["generations"][:2]
    open(sys.argv[2] + "/report-small.json", "w").write(json.dumps(payload))
PY
          ;;
      esac 2>/dev/null
      return 0 ;;
    *) return 0 ;;
  esac
  find "$root/tests/shared/corpus/$src" -type f \( -name '*.jsonl' -o -name '*.zst' -o -name '*.zstd' \) \
    -size -256k -exec cp -t "$dir" {} + 2>/dev/null || true
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
