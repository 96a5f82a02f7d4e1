#!/usr/bin/env python3
# usage: python3 bench/record-classes.py <truth.jsonl> <queries.json from bench/index.sh>
# Per 3-term query: sessions holding every word somewhere, in one record, and admitted by B-class record masks.
import json,sys,collections
truth, qf = sys.argv[1], sys.argv[2]
qs=[q['q'].split() for q in json.load(open(qf))['and3']]
words=set(w for q in qs for w in q)
sess=collections.defaultdict(list)
for line in open(truth):
    if '"type":"record"' not in line: continue
    d=json.loads(line)
    t=d['text'].lower()
    present=frozenset(w for w in words if w in t)
    sess[d['key']].append(present)
print('sessions',len(sess))
for terms in qs:
    cand=0; true=0; m={8:0,16:0,32:0,64:0,128:0}
    for k,recs in sess.items():
        masks=[]
        ok=True
        for t in terms:
            mm=[i for i,r in enumerate(recs) if t in r]
            if not mm: ok=False;break
            masks.append(mm)
        if not ok: continue
        cand+=1
        sets=[set(x) for x in masks]
        if set.intersection(*sets): true+=1
        for B in m:
            bs=[set(i%B for i in x) for x in masks]
            if set.intersection(*bs): m[B]+=1
    print(' '.join(terms), 'cand',cand,'true',true,m, flush=True)
