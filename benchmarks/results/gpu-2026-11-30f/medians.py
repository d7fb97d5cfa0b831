# medians.py LOG VARIANT...: each SSB query's median kernel time over a variant's rounds
# (5 EXPLAIN ANALYZE a query a round, "== VARIANT round N" headers), against its model.
import re, sys, statistics as st
qs = "q1.1 q1.2 q1.3 q2.1 q2.2 q2.3 q3.1 q3.2 q3.3 q3.4 q4.1 q4.2 q4.3".split()
cur = None; k = {}; cache = {}
for line in open(sys.argv[1]):
    m = re.match(r"== (\S+) round (\d+)", line)
    if m: cur = m.group(1); n = 0; continue
    m = re.search(r"GPU column cache ([0-9.]+) MB", line)
    if m and cur: cache[cur] = float(m.group(1))
    m = re.search(r"GPU kernels: ([0-9.]+) ms in total, bandwidth model ([0-9.]+)", line)
    if m and cur and n // 5 < len(qs):
        k.setdefault((cur, qs[n // 5]), []).append((float(m.group(1)), float(m.group(2)))); n += 1
for s in sys.argv[2:]:
    tot = 0; mt = 0; row = []
    for q in qs:
        v = k.get((s, q), [])
        if not v: row.append(f"{q} -"); continue
        med = st.median(x[0] for x in v); tot += med; mt += v[0][1]
        row.append(f"{q} {med:.3f} ({med / v[0][1]:.3f}x of {v[0][1]:.3f})")
    print(f"{s}: total {tot:.3f} ms (model {mt:.3f}), column cache {cache.get(s)} MB | " + " | ".join(row))
