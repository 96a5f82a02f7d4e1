# Shared by the corpus-scale bench scripts (sourced, not run): the release
# binary, a generated home of SIZE in WORK (made once per size and seed), and
# `run`, which runs recall on that home with no source or store variable of
# the caller's environment.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#   bench_setup <gen.py seed>      # needs SIZE and WORK; sets root, bin, home

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
target_dir=${CARGO_TARGET_DIR:-$root/target}
gen=${GEN:-$root/tests/shared/corpus-gen/gen.py}
# Every variable that would point recall elsewhere than `--home`.
HERMETIC=(-u RECALL_HOME -u CLAUDE_CONFIG_DIR -u CODEX_HOME -u KIMI_CODE_HOME -u KIMI_SHARE_DIR
  -u PI_CODING_AGENT_DIR -u INTENDANT_HOME)

bench_setup() {
  local seed=$1
  cd "$root"
  cargo build --release -q -p recall-host
  bin="$target_dir/release/recall"
  mkdir -p "$WORK"
  if [ ! -f "$WORK/g/truth.jsonl" ] || [ "$(cat "$WORK/g/size" 2>/dev/null)" != "$SIZE-$seed" ]; then
    python3 "$gen" --out "$WORK/g" --seed "$seed" --target-bytes "$SIZE" --force
    echo "$SIZE-$seed" > "$WORK/g/size"
  fi
  home="$WORK/g/home"
}

run() { env "${HERMETIC[@]}" "$bin" --home "$home" --retention-days 0 "$@"; }
