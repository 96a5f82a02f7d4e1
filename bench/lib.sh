# Shared by the corpus-scale bench scripts (sourced, not run): the release
# binary, a generated home of SIZE in WORK (made once per size and seed), and
# `run`, which runs recall on that home with no source or store variable of
# the caller's environment.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#   bench_setup <gen.py seed>      # needs SIZE and WORK; sets root, bin, home
#
# BIN=path/to/recall uses that binary instead of building the release one.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
target_dir=${CARGO_TARGET_DIR:-$root/target}
gen=${GEN:-$root/tests/shared/corpus-gen/gen.py}
# Every variable that would point recall elsewhere than `--home`.
HERMETIC=(-u RECALL_HOME -u CLAUDE_CONFIG_DIR -u CODEX_HOME -u KIMI_CODE_HOME -u KIMI_SHARE_DIR
  -u PI_CODING_AGENT_DIR -u INTENDANT_HOME)

bench_setup() {
  local seed=$1
  cd "$root"
  if [ -n "${BIN:-}" ]; then
    bin=$BIN
  else
    cargo build --release -q -p recall-host
    bin="$target_dir/release/recall"
  fi
  mkdir -p "$WORK"
  if [ ! -f "$WORK/g/truth.jsonl" ] || [ "$(cat "$WORK/g/size" 2>/dev/null)" != "$SIZE-$seed" ]; then
    python3 "$gen" --out "$WORK/g" --seed "$seed" --target-bytes "$SIZE" --force
    echo "$SIZE-$seed" > "$WORK/g/size"
  fi
  home="$WORK/g/home"
}

run() { env "${HERMETIC[@]}" "$bin" --home "$home" --retention-days 0 "$@"; }

# query_mix TRUTH OUT: the fixed search mix of store.sh and segments.sh (rare
# prose tokens, tool tokens, common words, a phrase, folded Unicode, filters,
# relevance, no match), one JSON request per line.
query_mix() {
python3 - "$1" "$2" <<'PY'
import json, re, sys
truth, out = sys.argv[1:3]
prose, tools, cwds = [], [], []
with open(truth) as f:
    for line in f:
        d = json.loads(line)
        if d["type"] == "record" and len(prose) < 20:
            m = re.search(r"u[0-9a-hjkmnp-tv-z]{10}", d["text"])
            if m: prose.append(m.group(0))
        elif d["type"] == "tool_token" and len(tools) < 5:
            tools.append(d["token"])
        elif d["type"] == "session" and d.get("cwd") and d["cwd"] not in cwds:
            cwds.append(d["cwd"])
qs = [{"q": t} for t in prose]
qs += [{"q": t, "scope": "all"} for t in tools]
qs += [{"q": w} for w in ["error", "the", "fix", "test", "cache", "release"]]
qs += [{"q": '"feature flag"'}, {"q": "strasse"}, {"q": "数据库"}, {"q": "don't"}, {"q": "cafes istanbul"}]
qs += [{"q": "error", "sort": "relevance"}, {"q": "plugin", "source": "codex,pi"},
       {"q": "migration", "cwd": cwds[0]}, {"q": "panic", "role": "assistant"},
       {"q": "error", "since": "2026-10-01", "until": "2026-10-15"},
       {"q": "parser", "include_superseded": "false", "subagents": "false"},
       {"q": "zzqxv nothing matches this"}]
with open(out, "w") as w:
    for q in qs:
        w.write(json.dumps(q, ensure_ascii=False) + "\n")
PY
}

# settle_merges SEGMENTS_JSON MAX CMD…: a backfill leaves merges behind (one
# merge per maintenance pass); runs CMD (an index) until the segment list
# stops changing, at most MAX times. Sets `settle` to the runs that merged.
settle_merges() {
  local list=$1 max=$2 before
  shift 2
  settle=0
  for _ in $(seq "$max"); do
    before=$(stat -c %Y.%i "$list" 2>/dev/null || echo none)
    "$@" > /dev/null
    [ "$(stat -c %Y.%i "$list" 2>/dev/null || echo none)" = "$before" ] && break
    settle=$((settle + 1))
  done
}

# wait_serving PORT: waits (at most 5 min) until the recall serve on PORT has
# indexed: its status reports a revision and a settled phase.
wait_serving() {
python3 - "$1" <<'PY'
import json, sys, time, urllib.request
port = sys.argv[1]
for _ in range(600):
    try:
        s = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/api/index/status", timeout=2))
        if s.get("phase") in ("current", "idle", "degraded") and s.get("revision", 0) > 0:
            break
    except Exception:
        pass
    time.sleep(0.5)
PY
}
