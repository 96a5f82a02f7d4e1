#!/usr/bin/env bash
# Bytes written by one live append (issue #11 target: ≤ 64 KiB at 10 GB
# besides the session's generation). Indexes a generated home of SIZE (gen.py
# seed SEED; default 2G, seed 7) into its own RECALL_HOME under WORK, then
# appends one line to a median Pi transcript and to the largest one, twice:
#   - CLI: `recall index` after each append (a one-shot process);
#   - daemon: a `recall serve` watching the home; after each append the
#     script polls its search until the new line is found, then classifies
#     what was written; then it waits for the deferred window's segment
#     (`recall serve` indexes the sessions changed in a 30 s window together)
#     and classifies that flush, and the shutdown, on rows of their own.
# Every store file written is classified: the generation, its .grams filter
# sidecar, index segments (+ segments.json), the new meta, the catalog, the
# superseded catalog's snapshot, the ledger journal, the extraction
# checkpoint. Writes bench/results/append-<SIZE>-<date>.md.
#
#   bash bench/append.sh                        # SIZE=2G, release build
#   HOME_DIR=/tmp/x/g/home BIN=target/debug/recall bash bench/append.sh
#       # an existing generated home (never written: WORK gets a hard-linked
#       # copy whose two appended transcripts are real copies)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/bench/lib.sh" # settle_merges
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
# The two Pi transcripts appended to: a median one and the largest.
mapfile -t pis < <(find "$HOME_DIR" -path '*/.pi/*' -name '*.jsonl' -printf '%s %P\n' | sort -n | cut -d' ' -f2-)
big_rel=${pis[-1]}
mid_rel=${pis[$(( ${#pis[@]} / 2 ))]}
# A home that is not ours is never written: WORK gets a hard-linked copy (no
# bytes copied) whose two appended files are real copies.
if [ "$HOME_DIR" != "$WORK/g/home" ]; then
  rm -rf "$WORK/copy"
  mkdir -p "$WORK/copy"
  # (not a store someone keeps inside that home: it changes under cp)
  for e in "$HOME_DIR"/.[!.]* "$HOME_DIR"/*; do
    [ -e "$e" ] && [ "$(basename "$e")" != .recall ] && cp -al "$e" "$WORK/copy/"
  done
  for f in "$mid_rel" "$big_rel"; do
    cp --remove-destination "$HOME_DIR/$f" "$WORK/copy/$f"
  done
  HOME_DIR="$WORK/copy"
fi
big="$HOME_DIR/$big_rel"
mid="$HOME_DIR/$mid_rel"
export RECALL_HOME="$WORK/recall"
store="$RECALL_HOME/index/v1"
run() { env -u CLAUDE_CONFIG_DIR -u CODEX_HOME -u KIMI_CODE_HOME -u KIMI_SHARE_DIR -u PI_CODING_AGENT_DIR \
  -u INTENDANT_HOME "$BIN" --home "$HOME_DIR" --retention-days 0 "$@"; }
rm -rf "$RECALL_HOME"
start=$(date +%s.%N)
run index --json > "$WORK/backfill.json"
backfill_s=$(python3 -c "import sys;print(round($(date +%s.%N)-$start,1))")
sessions=$(python3 -c "import json;print(sum(m['live'] for m in json.load(open('$store/catalog.json'))['metas']))")
# A backfill leaves merges behind (one merge per maintenance pass): work them
# off first, so the rows below show what an append writes, not the backlog.
settle_merges "$store/segments.json" 20 run index --json

snap() { # the store's files now → $WORK/snap.json
  python3 - "$store" "$WORK/snap.json" <<'PY'
import json, os, sys
store, snap = sys.argv[1:3]
out = {}
for d, _, names in os.walk(store):
    for n in names:
        p = os.path.join(d, n)
        try:
            st = os.stat(p)
        except FileNotFoundError:
            continue
        out[os.path.relpath(p, store)] = [st.st_ino, st.st_size, st.st_mtime_ns]
json.dump(out, open(snap, "w"))
PY
}

append_line() { # $1 = transcript, $2 = a token only this line holds
  # A new user message answering the last one (a Pi message line).
  tail -1 "$1" | python3 -c "
import json, sys
d = json.loads(sys.stdin.read())
d['parentId'] = d.get('id')
d['id'] = sys.argv[1][-8:]
d['message'] = {'role': 'user', 'content': [{'type': 'text', 'text': 'one more line ' + sys.argv[1]}]}
print(json.dumps(d))" "$2" >> "$1"
}

classify() { # $1 = row label: what was written since the last snap
  python3 - "$store" "$WORK/snap.json" "$1" <<'PY'
import json, os, sys
store, snap, label = sys.argv[1:4]
before = json.load(open(snap))
kinds = {}
for d, _, names in os.walk(store):
    for n in names:
        p = os.path.join(d, n)
        try:
            st = os.stat(p)
        except FileNotFoundError:
            continue
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
        elif rel in ("serve.json", "writer.lock"): continue
        else: k = "other (" + rel + ")"
        kinds[k] = kinds.get(k, 0) + w
gen = kinds.get("generation", 0)
besides = sum(v for k, v in kinds.items() if k != "generation")
book = sum(kinds.get(k, 0) for k in ("meta", "catalog", "snapshot", "ledger", "checkpoint"))
other = "".join(f" ({k}: {v} B)" for k, v in kinds.items() if k.startswith("other"))
print(f"| {label}{other} | {gen} | " + " | ".join(
    str(kinds.get(k, 0)) for k in ("grams sidecar", "segments", "meta", "catalog", "snapshot", "ledger", "checkpoint"))
    + f" | **{besides/1024:.1f} KiB** | {book/1024:.1f} KiB |")
PY
}

size_mb() { python3 -c "import os,sys;print(f'{os.path.getsize(sys.argv[1])/1e6:.2f}')" "$1"; }
token() { python3 -c "import secrets;print('zq' + secrets.token_hex(6))"; }

# CLI: `recall index` after each append.
cli_rows=$(for f in "$mid" "$big"; do
  snap
  append_line "$f" "$(token)"
  run index --json > "$WORK/append.json"
  classify "CLI \`recall index\`, $(size_mb "$f") MB transcript"
done)

# Daemon: `recall serve` watching the home; each append is waited for
# through its search (the query-time refresh indexes it).
api() {
  python3 - "$addr" "$1" <<'PY'
import json, sys, urllib.request
addr, path = sys.argv[1:3]
try:
    with urllib.request.urlopen(f"http://{addr}{path}", timeout=30) as r:
        print(r.read().decode())
except Exception as e:
    print(json.dumps({"error": str(e)}))
PY
}
# exec: $! is the daemon itself (SIGINT stops it gracefully).
(exec env -u CLAUDE_CONFIG_DIR -u CODEX_HOME -u KIMI_CODE_HOME -u KIMI_SHARE_DIR -u PI_CODING_AGENT_DIR \
  -u INTENDANT_HOME "$BIN" --home "$HOME_DIR" --retention-days 0 serve --bind 127.0.0.1:0 --no-demo \
  > /dev/null 2> "$WORK/serve.log") &
serve_pid=$!
trap 'kill -INT $serve_pid 2>/dev/null || true' EXIT
addr=""
for _ in $(seq 600); do
  addr=$(grep -o 'serving http://[0-9.:]*' "$WORK/serve.log" | head -1 | sed 's,serving http://,,' || true)
  [ -n "$addr" ] && break
  sleep 0.1
done
[ -n "$addr" ] || { cat "$WORK/serve.log"; echo "recall serve did not start" >&2; exit 1; }
for _ in $(seq 600); do
  phase=$(api /api/index/status | python3 -c "import json,sys;print(json.load(sys.stdin).get('phase',''))")
  [ "$phase" = current ] && break
  sleep 0.2
done
sleep 2 # the start-up sweep's maintenance and collection
rss_kib() { awk '/VmRSS/{print $2}' "/proc/$serve_pid/status"; }
daemon_rows=""
snap
for f in "$mid" "$big"; do
  tok=$(token)
  t0=$(date +%s%N)
  append_line "$f" "$tok"
  hits=0
  for _ in $(seq 600); do
    hits=$(api "/api/sessions/message-search?q=$tok&scope=all" \
      | python3 -c "import json,sys;print(len(json.load(sys.stdin).get('sessions') or []))")
    [ "$hits" -ge 1 ] && break
    sleep 0.05
  done
  [ "$hits" -ge 1 ] || { echo "the daemon never found $tok" >&2; exit 1; }
  found_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  sleep 1 # anything the refresh still writes after answering
  daemon_rows+=$(classify "\`recall serve\`, $(size_mb "$f") MB transcript (found by its search after $found_ms ms)")$'\n'
  snap
done
# The window's segment: indexes both appended sessions together.
list0=$(stat -c %Y.%i "$store/segments.json" 2>/dev/null || echo none)
t0=$(date +%s)
for _ in $(seq 240); do
  [ "$(stat -c %Y.%i "$store/segments.json" 2>/dev/null || echo none)" != "$list0" ] && break
  sleep 0.5
done
sleep 2
flush_s=$(( $(date +%s) - t0 ))
daemon_rows+=$(classify "\`recall serve\`, the window's segment over both sessions (${flush_s} s after the last append; once per window, not per append)")$'\n'
rss=$(rss_kib)
snap
kill -INT $serve_pid
wait $serve_pid 2>/dev/null || true
trap - EXIT
daemon_rows+=$(classify "\`recall serve\`, shutdown (the checkpoints it held; else written after 5 quiet minutes)")

manifest_kib=$(du -sk "$store/metas" | cut -f1)
catalog_b=$(stat -c %s "$store/catalog.json")
date_s=$(date -u +%Y-%m-%d)
out="$root/bench/results/append-$SIZE-$date_s.md"
cat > "$out" <<EOF
# Bytes written by one live append — $SIZE generated home (gen.py seed $SEED)

$(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); binary $BIN
(built from $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo ' + uncommitted changes')). Backfill $backfill_s s, $sessions sessions, then $settle \`recall index\` runs that only merged the backfill's segments; metas/ holds
$manifest_kib KiB (the entries the old manifest.json held), catalog.json $catalog_b B. Daemon RSS after the appends: $(( rss / 1024 )) MiB.

| one appended line | generation B | grams sidecar B | segments B | meta B | catalog B | snapshot B | ledger B | checkpoint B | besides the generation | of which bookkeeping |
|---|---|---|---|---|---|---|---|---|---|---|
$cli_rows
$daemon_rows

Target (issue #11): ≤ 64 KiB besides the generation. The CLI (a one-shot \`recall index\`) writes the
session's filter sidecar, a one-session segment and its extraction checkpoint at once; \`recall serve\`
keeps live checkpoints in memory (written once the session has been quiet 5 min, when its memory cap
evicts them, or at shutdown) and indexes the sessions changed in a 30 s window in one segment (no
sidecar: the segment covers them; meanwhile its arena holds the live shards and their filters, and any
other reader scans those few generations).
EOF
cat "$out"
