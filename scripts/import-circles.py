#!/usr/bin/env python3
"""Import circles (strongly connected components > 1 file) of a crate, from `use crate::` / `crate::x` paths."""
import os, re, sys
root = sys.argv[1] if len(sys.argv) > 1 else "core/src"
files = {}
for d, _, fs in os.walk(root):
    for f in fs:
        if f.endswith(".rs"):
            p = os.path.join(d, f); rel = os.path.relpath(p, root)[:-3]
            mod = rel.replace(os.sep, "::")
            if mod.endswith("::mod"): mod = mod[:-5]
            if mod in ("lib", "main"): mod = ""
            files[mod] = p
def resolve(path):
    parts = path.split("::")
    for n in range(len(parts), 0, -1):
        m = "::".join(parts[:n])
        if m in files: return m
    return None
edges = {m: set() for m in files}
for m, p in files.items():
    src = open(p).read()
    # strip #[cfg(test)] mod tests { ... } at the end (tests are not part of the graph)
    i = src.find("#[cfg(test)]\nmod tests")
    if i >= 0: src = src[:i]
    src = re.sub(r"//[^\n]*", "", src)  # comments and doc links are no dependency
    for u in re.finditer(r"use crate::([^;]+);", src, re.S):
        body = u.group(1)
        # expand one level of braces
        mm = re.match(r"([\w:]*?)(?:::)?\{(.*)\}$", body.strip(), re.S)
        if mm:
            pre = mm.group(1)
            for item in re.split(r",\s*(?![^{]*\})", mm.group(2)):
                item = item.strip()
                if not item: continue
                item = re.sub(r"\{.*", "", item, flags=re.S).rstrip(":")
                t = resolve((pre + "::" + item) if pre else item)
                if t is not None and t != m and t != "": edges[m].add(t)
        else:
            t = resolve(body.strip().split(" as ")[0])
            if t is not None and t != m and t != "": edges[m].add(t)
    for u in re.finditer(r"crate::((?:\w+::)*\w+)", src):
        t = resolve(u.group(1))
        if t is not None and t != m and t != "": edges[m].add(t)
# Tarjan
idx, low, st, on, comps, c = {}, {}, [], set(), [], [0]
sys.setrecursionlimit(10000)
def sc(v):
    idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
    for w in edges[v]:
        if w not in idx: sc(w); low[v] = min(low[v], low[w])
        elif w in on: low[v] = min(low[v], idx[w])
    if low[v] == idx[v]:
        comp = []
        while True:
            w = st.pop(); on.discard(w); comp.append(w)
            if w == v: break
        comps.append(sorted(comp))
for v in sorted(files):
    if v not in idx: sc(v)
big = [x for x in comps if len(x) > 1]
for x in sorted(big, key=len, reverse=True):
    print(f"circle of {len(x)}: {', '.join(x)}")
print(f"largest circle: {max([len(x) for x in comps] + [1]) if big else 1} file(s); circles >2 files: {sum(1 for x in big if len(x)>2)}")
