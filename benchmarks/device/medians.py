# medians.py LOG: each variant's median kernel time a query (its EXPLAIN ANALYZE runs over
# every round; "== VARIANT round N" headers, "MARK qX" before each query), against its
# bandwidth model, and the column cache each variant ended with.
import re, sys, statistics as st
cur = q = None; k = {}; cache = {}; order = []
for line in open(sys.argv[1]):
    m = re.match(r"== (\S+) round (\d+)", line)
    if m:
        cur = m.group(1); q = None
        if cur not in order: order.append(cur)
        continue
    m = re.search(r"MARK (q[0-9.]+)", line)
    if m: q = m.group(1); continue
    m = re.search(r"GPU column cache ([0-9.]+) MB", line)
    if m and cur: cache[cur] = float(m.group(1))
    m = re.search(r"GPU kernels: ([0-9.]+) ms in total, bandwidth model ([0-9.]+)", line)
    if m and cur and q: k.setdefault((cur, q), []).append((float(m.group(1)), float(m.group(2))))
for s in order:
    qs = sorted({q for (v, q) in k if v == s}, key=lambda x: [int(p) for p in x[1:].split(".")])
    tot = mt = 0; row = []
    for q in qs:
        v = k[(s, q)]; med = st.median(x[0] for x in v); tot += med; mt += v[0][1]
        row.append(f"{q} {med:.3f} ({med / v[0][1]:.2f}x of {v[0][1]:.3f}, n={len(v)})")
    print(f"{s}: total {tot:.3f} ms (model {mt:.3f}), column cache {cache.get(s)} MB | " + " | ".join(row))
