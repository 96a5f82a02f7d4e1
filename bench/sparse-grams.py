#!/usr/bin/env python3
# usage: python3 bench/sparse-grams.py <truth.jsonl> <queries.json from bench/index.sh> <sessions sampled> <max gram length>
# e.g. python3 bench/sparse-grams.py /tmp/recall-index-bench-10G/g/truth.jsonl /tmp/recall-index-bench-10G/queries.json 1500 12
# Offline trial of sparse n-grams vs trigrams (shard level, conversation lane),
# on a sample of sessions of a generated home and the bench's queries.
import json, sys, collections, zlib, random
truth, qf, nsess, maxlen = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def w(b):  # bigram weight
    return zlib.crc32(b) 
def trigrams(s):
    return {s[i:i+3] for i in range(len(s)-2)}
def sparse(s):
    out=set(); n=len(s)
    if n<3: return out
    ws=[w(s[i:i+2]) for i in range(n-1)]
    for l in range(n-2):
        m=-1  # max interior weight
        for r in range(l+2, min(n, l+maxlen)):
            # gram s[l..r] inclusive; bigrams l..r-1; interior l+1..r-2
            if r-2 >= l+1: m=max(m, ws[r-2])
            if ws[l] > m and ws[r-1] > m:
                out.add(s[l:r+1])
            if m >= ws[l]: break
    return out
def covering(s):
    # all sparse grams of the term itself (each one is also extracted from any text holding the term)
    return sparse(s) if len(s)>=3 else set()
sess=collections.defaultdict(list)
for line in open(truth):
    if '"type":"record"' not in line: continue
    d=json.loads(line); sess[d['key']].append(d['text'].lower().encode())
keys=sorted(sess); random.Random(5).shuffle(keys); keys=keys[:nsess]
tri={}; sp={}; texts={}
P3=PS=0
for k in keys:
    t=set(); s=set()
    for r in sess[k]:
        t|=trigrams(r); s|=sparse(r)
    tri[k]=t; sp[k]=s; texts[k]=sess[k]; P3+=len(t); PS+=len(s)
print(f"sessions {len(keys)}; (gram, session) postings: trigrams {P3}, sparse (len 3..{maxlen}) {PS} ({PS/P3:.2f}x)")
q=json.load(open(qf))
for kind in ('rare','and3'):
    a=b=c=0
    for it in q[kind]:
        terms=[t.encode() for t in it['q'].lower().split()]
        g3=set().union(*(trigrams(t) for t in terms)); gs=set().union(*(covering(t) for t in terms))
        a+=sum(1 for k in keys if g3<=tri[k]); b+=sum(1 for k in keys if gs<=sp[k])
        c+=sum(1 for k in keys if all(any(t in r for r in texts[k]) for t in terms))
    print(f"{kind}: sessions holding every gram, summed over {len(q[kind])} queries: trigrams {a}, sparse {b}; holding every term somewhere: {c}")
