#!/usr/bin/env python3
# usage: python3 bench/ident-masks.py <truth.jsonl> <sessions sampled> [queries per kind]
# Offline trial: how many sessions the conversation lane's trigram postings
# admit for identifiers, paths and error-like phrases taken from the home's
# own records, with (a) trigrams + 64 record classes (the built index),
# (b) + a follow mask per posting (a 64- or 16-bit Bloom of the byte after
# each occurrence of the gram: adjacent grams of a term must be adjacent
# somewhere in the shard), (c) the shard's exact 4-gram set (what a follow
# mask approximates), against the sessions that hold the term in one record.
import json, sys, collections, random, re, zlib
truth, nsess = sys.argv[1], int(sys.argv[2])
per_kind = int(sys.argv[3]) if len(sys.argv) > 3 else 25
per_query = len(sys.argv) > 4
sess = collections.defaultdict(list)
for line in open(truth):
    if '"type":"record"' not in line: continue
    d = json.loads(line)
    if d['role'] not in ('user', 'assistant'): continue
    sess[d['key']].append(d['text'])
keys = sorted(sess); random.Random(5).shuffle(keys); keys = keys[:nsess]
rng = random.Random(11)
pat = {
    'camel': re.compile(r'\b[a-z]+[A-Z][a-z]+[A-Za-z]*\b'),
    'snake': re.compile(r'\b[a-z]+_[a-z]+[a-z_]*\b'),
    'path': re.compile(r'\b[\w-]+/[\w-]+/[\w-]+\.\w+\b'),
    'error': re.compile(r'\b[A-Z][a-z]+Error: [a-z]+ [a-z]+\b|\bE[A-Z]{4,} [a-z]+ [a-z]+\b'),
}
pool = {k: [] for k in pat}
for k in keys:
    for r in sess[k]:
        for kind, p in pat.items():
            pool[kind].extend(p.findall(r))
queries = {kind: rng.sample(sorted(set(v)), min(per_kind, len(set(v)))) for kind, v in pool.items()}
def h(b, bits): return zlib.crc32(bytes([b])) % bits
idx = {}
for k in keys:
    g3 = {}; fol64 = collections.defaultdict(int); fol16 = collections.defaultdict(int); g4 = set()
    for i, r in enumerate(sess[k]):
        b = r.lower().encode(); c = 1 << (i % 64)
        for j in range(len(b) - 2):
            g = b[j:j+3]; g3[g] = g3.get(g, 0) | c
            if j + 3 < len(b):
                fol64[g] |= 1 << h(b[j+3], 64); fol16[g] |= 1 << h(b[j+3], 16); g4.add(b[j:j+4])
    idx[k] = (g3, fol64, fol16, g4, [r.lower() for r in sess[k]])
def admits(k, term, mode):
    g3, fol64, fol16, g4, recs = idx[k]
    t = term.lower().encode(); gs = [t[j:j+3] for j in range(len(t) - 2)]
    m = -1
    for g in gs:
        m &= g3.get(g, 0)
        if not m: return False
    if mode == 'f64' or mode == 'f16':
        fol, bits = (fol64, 64) if mode == 'f64' else (fol16, 16)
        for j in range(len(t) - 3):
            if not fol.get(t[j:j+3], 0) >> h(t[j+3], bits) & 1: return False
    if mode == 'g4':
        for j in range(len(t) - 3):
            if t[j:j+4] not in g4: return False
    return True
print(f"sessions sampled: {len(keys)} of {len(sess)}")
print("| kind | queries | trigrams + classes | + follow mask 64 bit | + follow mask 16 bit | exact 4-grams | sessions holding the term |")
print("|---|---:|---:|---:|---:|---:|---:|")
for kind, qs in queries.items():
    tot = collections.Counter()
    for q in qs:
        c = collections.Counter()
        ql = q.lower()
        for k in keys:
            for mode in ('tri', 'f64', 'f16', 'g4'):
                if admits(k, q, mode): tot[mode] += 1; c[mode] += 1
            if any(ql in r for r in idx[k][4]): tot['exact'] += 1; c['exact'] += 1
        if per_query: print(f"  {q!r}: " + " ".join(f"{m}={c[m]}" for m in ('tri','f64','f16','g4','exact')))
    print(f"| {kind} | {len(qs)} | {tot['tri']} | {tot['f64']} | {tot['f16']} | {tot['g4']} | {tot['exact']} |")
