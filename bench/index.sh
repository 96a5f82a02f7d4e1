#!/usr/bin/env bash
# Search at scale, side by side (issue 11): recall (warm daemon over HTTP, and
# the `recall search` process) next to SQLite FTS5 (unicode61, over exactly the
# user and assistant records of truth.jsonl) and ripgrep (over the raw
# transcripts), in one run on one generated home.
#
#   bash bench/index.sh                      # SIZE=2G, gen.py seed 7
#   SIZE=10G SEED=9 bash bench/index.sh      # the 10 GB figures
#   SIZE=300M bash bench/index.sh            # a quick run
#
# Query kinds: rare (a prose token that occurs in exactly one record), common
# (an everyday word), and3 (three words of one record, ANDed), identifier
# (camelCase / snake_case words of the records held by 20–MOST sessions,
# default 60: made of common trigrams), path (`src/store/event.py`, as many)
# and error (error-like phrases such as `KeyError: 'x'`, asked as a phrase).
# Each kind has QN queries. The daemon's first asking of each query is timed
# on its own (it loads the candidates' shards), then ROUNDS more rounds. For
# rare tokens the bench also checks that recall's answer names the one
# session that holds the token (a partial answer that misses it counts as a
# miss).
#
# Writes bench/results/index-<SIZE>-<date>.md and keeps its raw JSON in WORK.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SIZE=${SIZE:-2G}
SEED=${SEED:-7}
WORK=${WORK:-/tmp/recall-index-bench-$SIZE}
ROUNDS=${ROUNDS:-5}
QN=${QN:-20}
PORT=${PORT:-$((20000 + RANDOM % 20000))}
bench_setup "$SEED"
command -v rg >/dev/null || { apt-get update -qq && apt-get install -y -qq ripgrep; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
src_bytes=$(du -sb --exclude=.recall "$home" | cut -f1)

# 1. Backfill (a fresh store each run).
rm -rf "$home/.recall"
sync
/usr/bin/time -v -o "$WORK/backfill.time" env "${HERMETIC[@]}" "$bin" --home "$home" --retention-days 0 index --json \
  > "$WORK/backfill.json"
# The merges the backfill left behind, as a running daemon would do them.
settle_merges "$home/.recall/index/v1/segments.json" 60 run index --json
segments=$(python3 -c "import json;print(len(json.load(open('$home/.recall/index/v1/segments.json'))['segments']))")
store_bytes=$(du -sb "$home/.recall" | cut -f1)

# 2. The query set, drawn from truth (seeded, so every run asks the same).
python3 - "$WORK/g/truth.jsonl" "$WORK/queries.json" "$QN" "${MOST:-60}" "$root/bench" <<'PY'
import json, random, re, sys
truth, out, n, most = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
sys.path.insert(0, sys.argv[5])
from kinds import Held
held = Held()
tok = re.compile(r"u[0-9a-hjkmnp-tv-z]{10}")
word = re.compile(r"[a-z]{5,12}")
rng = random.Random(11)
records = []  # (key, text) of user/assistant records, reservoir-sampled
seen = 0
with open(truth) as f:
    for line in f:
        if '"type":"record"' not in line.replace(" ", ""):
            continue
        d = json.loads(line)
        held.add(d["key"], d["text"])
        seen += 1
        if len(records) < 4000:
            records.append((d["key"], d["text"]))
        else:
            j = rng.randrange(seen)
            if j < 4000:
                records[j] = (d["key"], d["text"])
rng.shuffle(records)
rare, and3 = [], []
for key, text in records:
    m = tok.search(text)
    if m and len(rare) < n:
        rare.append({"q": m.group(0), "expect": key})
    words = list(dict.fromkeys(w for w in word.findall(text.lower())))
    if len(words) >= 3 and len(and3) < n:
        rng.shuffle(words)
        and3.append({"q": " ".join(words[:3])})
common = ["error", "test", "function", "cache", "release", "config", "update", "request", "value", "build",
          "file", "server", "query", "index", "thread", "memory", "output", "change", "check", "type"][:n]
json.dump({"rare": rare, "common": [{"q": w} for w in common], "and3": and3,
           "identifier": [{"q": t} for t in held.pick("identifier", rng, n, 20, most)],
           "path": [{"q": t} for t in held.pick("path", rng, n, 20, most)],
           "error": [{"q": f'"{t}"'} for t in held.pick("error", rng, n, 5, 200)]},
          open(out, "w"), ensure_ascii=False)
PY

# 3. SQLite FTS5 over the same records (built once per home).
fts="$WORK/fts5.db"
if [ ! -f "$fts" ]; then
  python3 - "$WORK/g/truth.jsonl" "$fts" > "$WORK/fts5-build.json" <<'PY'
import json, sqlite3, sys, time
truth, db = sys.argv[1:3]
t0 = time.time()
c = sqlite3.connect(db + ".tmp")
c.execute("PRAGMA journal_mode=OFF"); c.execute("PRAGMA synchronous=OFF")
c.execute("CREATE VIRTUAL TABLE r USING fts5(text, key UNINDEXED, ts UNINDEXED, tokenize='unicode61 remove_diacritics 2')")
batch, n, prose = [], 0, 0
with open(truth) as f:
    for line in f:
        d = json.loads(line)
        if d["type"] != "record":
            continue
        batch.append((d["text"], d["key"], d["ts_ms"])); n += 1; prose += len(d["text"].encode())
        if len(batch) == 5000:
            c.executemany("INSERT INTO r VALUES (?,?,?)", batch); batch = []
c.executemany("INSERT INTO r VALUES (?,?,?)", batch)
c.execute("INSERT INTO r(r) VALUES('optimize')")
c.commit(); c.close()
import os; os.rename(db + ".tmp", db)
print(json.dumps({"records": n, "prose_bytes": prose, "build_s": round(time.time() - t0, 1)}))
PY
fi
python3 - "$fts" "$WORK/queries.json" "$ROUNDS" > "$WORK/fts5.json" <<'PY'
import json, sqlite3, sys, time
db, qf, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
qs = json.load(open(qf))
c = sqlite3.connect(db)
# The same answer shape as recall's first page: the 20 sessions with the newest
# matching record, with their hit counts.
sql = "SELECT key, max(ts) AS m, count(*) FROM r WHERE r MATCH ? GROUP BY key ORDER BY m DESC LIMIT 20"
def fts_q(q):
    # A quoted query is one phrase; otherwise every word, ANDed (as recall).
    if len(q) > 1 and q[0] == q[-1] == '"':
        return '"' + q[1:-1].replace('"', '""') + '"'
    return " ".join('"' + w.replace('"', '""') + '"' for w in q.split())
out = {}
for kind, items in qs.items():
    ms, found = [], 0
    for rnd in range(rounds + 1):
        for it in items:
            t = time.perf_counter()
            rows = c.execute(sql, (fts_q(it["q"]),)).fetchall()
            dt = (time.perf_counter() - t) * 1000
            if rnd:
                ms.append(dt)
                if "expect" in it and any(r[0] == it["expect"] for r in rows):
                    found += 1
    out[kind] = {"ms": ms, "found": found}
print(json.dumps(out))
PY

# 4. recall serve, warm, over HTTP (one keep-alive connection).
env "${HERMETIC[@]}" "$bin" --home "$home" --retention-days 0 serve --bind "127.0.0.1:$PORT" --no-demo \
  > "$WORK/serve.log" 2>&1 &
serve_pid=$!
trap 'kill $serve_pid 2>/dev/null || true' EXIT
wait_serving "$PORT"
python3 - "$PORT" "$WORK/queries.json" "$ROUNDS" > "$WORK/recall-http.json" <<'PY'
import http.client, json, sys, time, urllib.parse
port, qf, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
qs = json.load(open(qf))
conn = http.client.HTTPConnection("127.0.0.1", int(port))
out = {}
for kind, items in qs.items():
    ms, first, first_partial, found, partial, empty = [], [], 0, 0, 0, 0
    for rnd in range(rounds + 1):
        for it in items:
            path = "/api/sessions/message-search?" + urllib.parse.urlencode({"q": it["q"]})
            t = time.perf_counter()
            conn.request("GET", path)
            body = conn.getresponse().read()
            dt = (time.perf_counter() - t) * 1000
            d = json.loads(body)
            if not rnd:
                # The first asking: the candidates' shards are not in the arena yet.
                first.append(dt)
                first_partial += d.get("state") == "partial"
                continue
            ms.append(dt)
            partial += d.get("state") == "partial"
            empty += not d.get("sessions")
            if "expect" in it and any(s["session_key"] == it["expect"] for s in d.get("sessions", [])):
                found += 1
    out[kind] = {"ms": ms, "first": first, "first_partial": first_partial, "found": found, "partial": partial,
                 "empty": empty}
print(json.dumps(out))
PY
serve_rss=$(awk '/VmRSS/{print $2}' "/proc/$serve_pid/status")
serve_hwm=$(awk '/VmHWM/{print $2}' "/proc/$serve_pid/status")
serve_anon=$(awk '/RssAnon/{print $2}' "/proc/$serve_pid/status")
serve_file=$(awk '/RssFile/{print $2}' "/proc/$serve_pid/status")

# 5. The `recall search` process (daemon still running), wall time per call.
python3 - "$bin" "$home" "$WORK/queries.json" > "$WORK/recall-cli.json" <<'PY'
import json, os, subprocess, sys, time
bin_, home, qf = sys.argv[1:4]
qs = json.load(open(qf))
env = {k: v for k, v in os.environ.items() if k not in ("RECALL_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME",
       "KIMI_CODE_HOME", "KIMI_SHARE_DIR", "PI_CODING_AGENT_DIR", "INTENDANT_HOME")}
out = {}
for kind, items in qs.items():
    ms = []
    for it in items[:10]:
        t = time.perf_counter()
        subprocess.run([bin_, "--home", home, "--retention-days", "0", "search", "--json", it["q"]],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        ms.append((time.perf_counter() - t) * 1000)
    out[kind] = {"ms": ms}
print(json.dumps(out))
PY
kill $serve_pid 2>/dev/null || true
wait $serve_pid 2>/dev/null || true
trap - EXIT

# 6. ripgrep over the raw transcripts (what a user without an index does).
python3 - "$home" "$WORK/queries.json" > "$WORK/rg.json" <<'PY'
import json, subprocess, sys, time
home, qf = sys.argv[1:3]
qs = json.load(open(qf))
out = {}
for kind, items in qs.items():
    ms = []
    for it in items[:3]:
        q = it["q"]
        words = [q[1:-1]] if len(q) > 1 and q[0] == q[-1] == '"' else q.split()
        t = time.perf_counter()
        # rg has no AND across words: list files with the first word, then filter.
        p = subprocess.run(["rg", "-l", "-i", "-F", "--hidden", "--no-ignore", words[0], home],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        files = p.stdout.split(b"\n")
        for w in words[1:]:
            files = [f for f in files if f]
            if not files:
                break
            # Thousands of files at 10 GB: through xargs, not one argv.
            p = subprocess.run(["xargs", "-0", "rg", "-l", "-i", "-F", w], input=b"\0".join(files),
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            files = p.stdout.split(b"\n")
        ms.append((time.perf_counter() - t) * 1000)
    out[kind] = {"ms": ms}
print(json.dumps(out))
PY

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
date_s=$(date -u +%Y-%m-%d)
out="$root/bench/results/index-$SIZE-$date_s.md"
python3 - "$WORK" "$SIZE" "$SEED" "$src_bytes" "$store_bytes" "$serve_rss" "$serve_hwm" "$serve_anon" "$serve_file" "$bin" "$settle" "$segments" "$load_before" \
  "$load_after" "$ROUNDS" "$(git -C "$root" rev-parse --short HEAD)" > "$out" <<'PY'
import json, os, re, subprocess, sys
(work, size, seed, src, store, rss, hwm, anon, filed, binary, settle, segments, lb, la, rounds, commit) = sys.argv[1:]
ld = lambda n: json.load(open(os.path.join(work, n)))
fts, http, cli, rg = ld("fts5.json"), ld("recall-http.json"), ld("recall-cli.json"), ld("rg.json")
fb, bf = ld("fts5-build.json"), ld("backfill.json")
def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")
f = lambda x: f"{x:.2f}" if x < 10 else f"{x:.1f}" if x < 100 else f"{x:.0f}"
cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'"], capture_output=True, text=True).stdout.strip()
# The index files a search reads: the listed segments and the filter
# sidecars (merged-away segments wait out the collector's grace period).
seg = os.path.join(work, "g/home/.recall/index/v1")
listed = json.load(open(os.path.join(seg, "segments.json")))["segments"]
idx_files = sum(os.path.getsize(os.path.join(seg, "segments", s["name"])) for s in listed)
for dp, _, fs in os.walk(seg):
    idx_files += sum(os.path.getsize(os.path.join(dp, n)) for n in fs if n.endswith(".grams"))
print(f"# Search at scale — {size} (gen.py seed {seed})\n")
print(f"`bash bench/index.sh` at {commit} (binary {binary}). Machine: {os.cpu_count()} cores ({cpu}), load average before / after: {lb} / {la} "
      "(the machine may be shared: wall times include waiting for a core).\n")
print(f"Home: {int(src)/1e6:.0f} MB of transcripts, {bf.get('new_sessions')} sessions; {fb['records']:,} user/assistant "
      f"records, {fb['prose_bytes']/1e6:.0f} MB of prose (what FTS5 indexes). recall backfill: {bf['elapsed_ms']/1000:.1f} s "
      f"({bf['bytes_read']/1e6/(bf['elapsed_ms']/1000):.0f} MB/s), then {settle} `recall index` runs that merged what it left: "
      f"{segments} live segments. Store: {int(store)/1e6:.0f} MB "
      f"(filter sidecars / index files: {idx_files/1e6:.1f} MB). FTS5 build: {fb['build_s']} s, "
      f"{os.path.getsize(os.path.join(work, 'fts5.db'))/1e6:.0f} MB.\n")
print(f"Daemon RSS after the HTTP runs: {int(rss)//1024} MiB (peak {int(hwm)//1024} MiB): {int(anon)//1024} MiB "
      f"anonymous (heap: the arena, directories, caches), {int(filed)//1024} MiB file-backed (the memory-mapped "
      "segments' pages the queries touched: page cache the kernel can reclaim).\n")
print("Times in ms, p50 / p95. FTS5 and the warm daemon: every query of the kind × rounds, after the "
      "first asking; the daemon's first asking of each query (its candidates' shards not yet loaded) has its "
      "own column, with how many of those answers were partial. `found` = rare tokens whose one session "
      "recall/FTS5 named on the first page. The `recall search` process runs while the daemon is up "
      "(it asks the daemon); bench/nodaemon.sh measures it with no daemon.\n")
print("| query kind | queries | FTS5 unicode61 | recall serve, first asking (partial) | recall serve, warm HTTP | "
      "partial / empty answers | found (FTS5 / recall) | `recall search` process | ripgrep (3 queries) |")
print("|---|---|---|---|---|---|---|---|---|")
for kind in ("rare", "common", "and3", "identifier", "path", "error"):
    a, h, c, r = fts[kind], http[kind], cli[kind], rg[kind]
    n = len(h["ms"])
    found = f"{a['found']} / {h['found']} of {n}" if kind == "rare" else ""
    first = h["first"]
    print(f"| {kind} | {len(first)} | {f(pct(a['ms'],50))} / {f(pct(a['ms'],95))} | "
          f"{f(pct(first,50))} / {f(pct(first,95))} ({h['first_partial']}) | "
          f"{f(pct(h['ms'],50))} / {f(pct(h['ms'],95))} | "
          f"{h['partial']} / {h['empty']} of {n} | {found} | {f(pct(c['ms'],50))} / {f(pct(c['ms'],95))} | "
          f"{f(pct(r['ms'],50))} |")
PY
cat "$out"
