#!/usr/bin/env bash
# Bytes written by one live append (issue #11 target: ≤ 64 KiB at 10 GB
# besides the session's generation). Indexes a generated home of SIZE (gen.py
# seed SEED; default 2G, seed 7) into its own RECALL_HOME under WORK, then
# appends one line to the largest Pi transcript and to a median one and
# indexes again, classifying every store file the second index wrote: the
# generation, its .grams filter sidecar, index segments (+ segments.json), the
# new meta, the catalog, the superseded catalog's snapshot, the ledger journal,
# the extraction checkpoint. Writes bench/results/append-<SIZE>-<date>.md.
#
#   bash bench/append.sh                        # SIZE=2G, release build
#   HOME_DIR=/tmp/x/g/home BIN=target/debug/recall bash bench/append.sh
#       # an existing generated home (read only: the store goes to WORK)
#       # and another binary
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SIZE=${SIZE:-2G}
SEED=${SEED:-7}
WORK=${WORK:-/tmp/recall-append-bench}
mkdir -p "$WORK"
if [ -z "${BIN:-}" ]; then
  (cd "$root" && cargo build --release -q -p recall-host)
  BIN="$root/target/release/recall"
fi
if [ -z "${HOME_DIR:-}" ]; then
  if [ ! -f "$WORK/g/size" ] || [ "$(cat "$WORK/g/size")" != "$SIZE-$SEED" ]; then
    python3 "$root/tests/shared/corpus-gen/gen.py" --out "$WORK/g" --seed "$SEED" --target-bytes "$SIZE" --force
    echo "$SIZE-$SEED" > "$WORK/g/size"
  fi
  HOME_DIR="$WORK/g/home"
fi
# The transcripts are appended to, so work on a copy of the two we touch
# only when the home is ours; a shared home is copied whole (hard links do
# not protect against appends), so prefer a home of your own.
if [ "$HOME_DIR" != "$WORK/g/home" ]; then
  rm -rf "$WORK/copy"
  cp -a "$HOME_DIR" "$WORK/copy"
  HOME_DIR="$WORK/copy"
fi
export RECALL_HOME="$WORK/recall"
store="$RECALL_HOME/index/v1"
run() { env -u CLAUDE_CONFIG_DIR -u CODEX_HOME -u KIMI_CODE_HOME -u KIMI_SHARE_DIR -u PI_CODING_AGENT_DIR \
  -u INTENDANT_HOME "$BIN" --home "$HOME_DIR" --retention-days 0 "$@"; }
rm -rf "$RECALL_HOME"
start=$(date +%s.%N)
run index --json > "$WORK/backfill.json"
backfill_s=$(python3 -c "import sys;print(round($(date +%s.%N)-$start,1))")
sessions=$(python3 -c "import json;print(sum(m['live'] for m in json.load(open('$store/catalog.json'))['metas']))")

measure() { # $1 = transcript
  python3 - "$store" "$1" "$WORK/snap.json" <<'PY'
import json, os, sys
store, f, snap = sys.argv[1:4]
def files():
    out = {}
    for d, _, names in os.walk(store):
        for n in names:
            p = os.path.join(d, n)
            st = os.stat(p)
            out[os.path.relpath(p, store)] = [st.st_ino, st.st_size, st.st_mtime_ns]
    return out
json.dump(files(), open(snap, "w"))
PY
  # A new user message answering the last one (a Pi message line).
  tail -1 "$1" | python3 -c "
import json, secrets, sys
d = json.loads(sys.stdin.read())
d['parentId'] = d.get('id')
d['id'] = secrets.token_hex(4)
d['message'] = {'role': 'user', 'content': [{'type': 'text', 'text': 'one more line zq' + secrets.token_hex(5)}]}
print(json.dumps(d))" >> "$1"
  run index --json > "$WORK/append.json"
  python3 - "$store" "$WORK/snap.json" "$1" <<'PY'
import json, os, sys
store, snap, f = sys.argv[1:4]
before = json.load(open(snap))
kinds = {}
for d, _, names in os.walk(store):
    for n in names:
        p = os.path.join(d, n)
        st = os.stat(p)
        rel = os.path.relpath(p, store)
        b = before.get(rel)
        # New or replaced (another inode): all of it; the same inode grown
        # (the journal): what was appended; a refreshed mtime alone (an
        # existing generation linked again) writes nothing.
        if b is None or b[0] != st.st_ino:
            w = st.st_size
        else:
            w = max(0, st.st_size - b[1])
        if not w:
            continue
        if rel.startswith("generations/") and rel.endswith(".json"): k = "generation"
        elif rel.endswith(".grams"): k = "grams sidecar"
        elif rel.startswith("segments/") or rel == "segments.json": k = "segments"
        elif rel.startswith("metas/"): k = "meta"
        elif rel.startswith("snapshots/"): k = "snapshot"
        elif rel.startswith("checkpoints/"): k = "checkpoint"
        elif rel == "catalog.json": k = "catalog"
        elif rel in ("ledger.jsonl", "indexer.json"): k = "ledger"
        else: k = "other (" + rel + ")"
        kinds[k] = kinds.get(k, 0) + w
gen = kinds.get("generation", 0)
besides = sum(v for k, v in kinds.items() if k != "generation")
book = sum(kinds.get(k, 0) for k in ("meta", "catalog", "snapshot", "ledger", "checkpoint"))
print(f"| {os.path.getsize(f)/1e6:.2f} MB transcript | {gen} | " + " | ".join(
    str(kinds.get(k, 0)) for k in ("grams sidecar", "segments", "meta", "catalog", "snapshot", "ledger", "checkpoint"))
    + f" | **{besides/1024:.1f} KiB** | {book/1024:.1f} KiB |")
PY
}
mapfile -t pis < <(find "$HOME_DIR" -path '*/.pi/*' -name '*.jsonl' -printf '%s %p\n' | sort -n | awk '{print $2}')
big=${pis[-1]}
mid=${pis[$(( ${#pis[@]} / 2 ))]}
rows=$(measure "$mid"; measure "$big")
manifest_kib=$(du -sk "$store/metas" | cut -f1)
catalog_b=$(stat -c %s "$store/catalog.json")
date_s=$(date -u +%Y-%m-%d)
out="$root/bench/results/append-$SIZE-$date_s.md"
cat > "$out" <<EOF
# Bytes written by one live append — $SIZE generated home (gen.py seed $SEED)

$(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); binary $BIN
(built from $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo ' + uncommitted changes')). Backfill $backfill_s s, $sessions sessions; metas/ holds
$manifest_kib KiB (the entries the old manifest.json held), catalog.json $catalog_b B.

| appended to | generation B | grams sidecar B | segments B | meta B | catalog B | snapshot B | ledger B | checkpoint B | besides the generation | of which bookkeeping |
|---|---|---|---|---|---|---|---|---|---|---|
$rows

Target (issue #11): ≤ 64 KiB besides the generation. Bookkeeping (meta + catalog + snapshot + ledger +
checkpoint) does not grow with the store; the grams sidecar and the one-session segment follow the size of the
session appended to.
EOF
cat "$out"
