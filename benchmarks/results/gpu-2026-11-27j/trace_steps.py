# Per query: the median (warm runs, the first two left out) of each step of a TESSERA_TRACE_HOST=1 log.
# usage: python3 trace_steps.py log3-trace-new.txt
import sys, re, statistics, collections, gzip
runs = collections.defaultdict(list)
for line in (gzip.open(sys.argv[1], 'rt') if sys.argv[1].endswith('.gz') else open(sys.argv[1])):
    if not line.startswith("trace "): continue
    _, q, rest = line.split(" ", 2)
    marks = re.findall(r"(.+?)@([0-9.]+)(?: |$)", rest.strip())
    runs[q].append([(n.strip(), float(t)) for n, t in marks])
tot = collections.Counter()
for q, rs in runs.items():
    rs = rs[2:]  # warm
    # deltas per step index
    n = min(len(r) for r in rs)
    steps = []
    for i in range(1, n):
        name = rs[0][i][0]
        d = statistics.median(r[i][1] - r[i-1][1] for r in rs)
        steps.append((name, d))
    total = statistics.median(r[n-1][1] for r in rs)
    print(f"{q}: total {total:.1f} us")
    print("   " + "  ".join(f"{n}:{d:.1f}" for n, d in steps))
    for nme, d in steps: tot[nme] += d
print("sum over queries by step (us):")
for k, v in sorted(tot.items(), key=lambda x: -x[1]): print(f"  {k:25s} {v:8.1f}")
