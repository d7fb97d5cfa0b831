# Per query: when the first kernel and the last pipeline kernel (the probe) were queued, from the probe
# queued to its results downloaded, and after; medians of the warm runs (the first two left out).
# usage: python3 trace_phases.py log3-trace-new.txt
import sys, re, statistics, collections, gzip
runs = collections.defaultdict(list)
for line in (gzip.open(sys.argv[1], 'rt') if sys.argv[1].endswith('.gz') else open(sys.argv[1])):
    if not line.startswith("trace "): continue
    _, q, rest = line.split(" ", 2)
    marks = re.findall(r"(.+?)@([0-9.]+)(?: |$)", rest.strip())
    runs[q].append([(n.strip(), float(t)) for n, t in marks])
T=collections.Counter()
for q, rs in runs.items():
    rs = rs[2:]
    def at(r, name, last=True):
        xs=[t for n,t in r if n==name]
        return xs[-1] if last else xs[0]
    pre = statistics.median(at(r,"kernel queued") for r in rs)
    first = statistics.median(at(r,"kernel queued",False) for r in rs)
    wait = statistics.median(at(r,"downloaded")-at(r,"kernel queued") for r in rs)
    post = statistics.median(r[-1][1]-at(r,"downloaded") for r in rs)
    tot = statistics.median(r[-1][1] for r in rs)
    print(f"{q}: first kernel queued {first:6.1f}  probe queued {pre:6.1f}  probe queued->downloaded {wait:6.1f}  after {post:5.1f}  total {tot:6.1f}")
    T['pre']+=pre; T['wait']+=wait; T['post']+=post; T['tot']+=tot
print(T)
