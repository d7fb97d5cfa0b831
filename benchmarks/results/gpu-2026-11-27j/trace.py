# Reads a TESSERA_TRACE_HOST=1 log (plain or .gz): medians over each query's warm runs (the
# first two left out).
#   python3 trace.py LOG           each step's time after the one before it
#   python3 trace.py --phases LOG  when the first and the last pipeline kernel (the probe)
#                                  were queued, from the probe queued to its results
#                                  downloaded, and what followed
import collections, gzip, re, statistics, sys

phases = sys.argv[1] == "--phases"
path = sys.argv[-1]
runs = collections.defaultdict(list)
for line in (gzip.open(path, "rt") if path.endswith(".gz") else open(path)):
    if not line.startswith("trace "):
        continue
    _, q, rest = line.split(" ", 2)
    marks = re.findall(r"(.+?)@([0-9.]+)(?: |$)", rest.strip())
    runs[q].append([(n.strip(), float(t)) for n, t in marks])

total = collections.Counter()
for q, rs in runs.items():
    rs = rs[2:]
    if phases:
        def at(r, name, last=True):
            xs = [t for n, t in r if n == name]
            return xs[-1] if last else xs[0]
        first = statistics.median(at(r, "kernel queued", False) for r in rs)
        pre = statistics.median(at(r, "kernel queued") for r in rs)
        wait = statistics.median(at(r, "downloaded") - at(r, "kernel queued") for r in rs)
        post = statistics.median(r[-1][1] - at(r, "downloaded") for r in rs)
        tot = statistics.median(r[-1][1] for r in rs)
        print(f"{q}: first kernel queued {first:6.1f}  probe queued {pre:6.1f}  probe queued->downloaded {wait:6.1f}  after {post:5.1f}  total {tot:6.1f}")
        total.update({"to the probe queued": pre, "probe queued to downloaded": wait, "after": post, "total": tot})
    else:
        n = min(len(r) for r in rs)
        steps = [(rs[0][i][0], statistics.median(r[i][1] - r[i - 1][1] for r in rs)) for i in range(1, n)]
        print(f"{q}: total {statistics.median(r[n - 1][1] for r in rs):.1f} us")
        print("   " + "  ".join(f"{name}:{d:.1f}" for name, d in steps))
        for name, d in steps:
            total[name] += d
print("sum over queries (us):", {k: round(v, 1) for k, v in sorted(total.items(), key=lambda x: -x[1])})
