# Reads an `exp` log (EXPLAIN ANALYZE of SSB SF20's 13 queries per setting): each query's
# GPU kernel time (ms) and its ratio to the bandwidth model per setting, the totals and
# the GPU column cache after the 13 queries.   python3 exptab.py LOG
import re, sys
secs = []
for line in open(sys.argv[1]):
    if line.startswith('== '):
        secs.append((line.strip()[3:], []))
        continue
    m = re.search(r'GPU kernels: ([0-9.]+) ms in total, bandwidth model ([0-9.]+) ms.*GPU column cache ([0-9.]+) MB', line)
    if m and secs:
        secs[-1][1].append((float(m.group(1)), float(m.group(2)), float(m.group(3))))
for i, (name, _) in enumerate(secs):
    print(f"setting {i}: {name}")
names = ["q1.1", "q1.2", "q1.3", "q2.1", "q2.2", "q2.3", "q3.1", "q3.2", "q3.3", "q3.4", "q4.1", "q4.2", "q4.3"]
print("query | " + " | ".join(f"setting {i}" for i in range(len(secs))))
for i, n in enumerate(names):
    print(n + " | " + " | ".join(f"{s[1][i][0]:.3f} ({s[1][i][0] / s[1][i][1]:.2f}x)" if i < len(s[1]) else "-" for s in secs))
print("total | " + " | ".join(f"{sum(x[0] for x in s[1]):.3f}, model {sum(x[1] for x in s[1]):.3f}, cache {s[1][-1][2]:.0f} MB" for s in secs if s[1]))
