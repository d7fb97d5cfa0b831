# Per query: the median wall (and kernels) of each setting over all rounds of `bench --json` files
# named PREFIX-rROUND-eSETTING.json. usage: python3 ab_json.py . run4-ssb20
import json, sys, glob, statistics, collections, re
# usage: abjson.py DIR PREFIX  -> per query median wall per setting (all rounds pooled) and per round totals
d, prefix = sys.argv[1], sys.argv[2]
per = collections.defaultdict(lambda: collections.defaultdict(list))
kern = collections.defaultdict(lambda: collections.defaultdict(list))
tot = collections.defaultdict(list)
for f in sorted(glob.glob(f"{d}/{prefix}-r*-e*.json")):
    m = re.search(r"-r(\d+)-e([\w.]+)\.json", f); r, e = m.group(1), m.group(2)
    j = json.load(open(f)); s = 0
    for q in j["results"]:
        if q.get("engine") not in ("tessera", "Tessera"): pass
        med = statistics.median(q["warm_ms"]); s += med
        per[e][q["query"]].extend(q["warm_ms"])
        if q.get("gpu"): kern[e][q["query"]].append(q["gpu"]["kernel_ms"])
    tot[e].append((r, round(s, 3)))
for e in tot: print("setting", e, "round totals (sum of per-query medians, ms):", tot[e])
qs = list(per[next(iter(per))].keys())
print("query  " + "  ".join(f"e{e}: wall med (kern)" for e in per))
sums = collections.Counter()
for q in qs:
    row = []
    for e in per:
        w = statistics.median(per[e][q]); k = statistics.median(kern[e][q]) if kern[e][q] else float('nan')
        sums[e] += w
        row.append(f"{w:8.3f} ({k:6.3f})")
    print(f"{q:6s} " + "  ".join(row))
print("sum of pooled medians:", {e: round(v, 3) for e, v in sums.items()})
