#!/usr/bin/env python3
"""Sums Nsight Compute's kernel durations (gpu__time_duration.sum) of a query's warm runs.

Input (argv[1]): lines `== QUERY RUNS` followed by ncu's output for one process that ran
the query RUNS times. For each query, the warm runs' kernels are the process of 4 runs
less the process of 1 run (the first run also builds the dimension tables), over 3.
Prints per query the warm run's kernels in µs, with and without the fill launches
(`tessera_fill_many`, outside the CUDA-event window of the bench's kernel figure unless
64 MiB or more); then each warm run's kernels without fills (the launches after the
first run's, split where a generated pipeline starts: a warm SSB run launches one, its
builds taken from the build cache) and their median."""
import re
import sys

UNIT = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6, "ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
procs = {}
cur = None
name = None
for line in open(sys.argv[1]):
    m = re.match(r"== (\S+) (\d+)$", line.strip())
    if m:
        cur = (m.group(1), int(m.group(2)))
        procs[cur] = []
        continue
    m = re.match(r"\s+(tessera_[a-z_0-9]+)", line)
    if m and "(" in line:
        name = m.group(1)
        continue
    m = re.match(r"\s+gpu__time_duration\.sum\s+(\S+)\s+([\d.,]+)", line)
    if m and cur and name:
        procs[cur].append((name, float(m.group(2).replace(",", "")) * UNIT[m.group(1)]))
        name = None
for q in sorted({q for q, _ in procs}):
    one, four = procs.get((q, 1), []), procs.get((q, 4), [])
    if not one or not four:
        print(f"{q}: missing ({len(one)} / {len(four)} launches)")
        continue
    total = lambda ks, fills: sum(d for n, d in ks if fills or n != "tessera_fill_many")
    warm = (total(four, False) - total(one, False)) / 3
    warm_f = (total(four, True) - total(one, True)) / 3
    kinds = sorted({n for n, _ in four[len(one):]})
    print(f"{q}: warm kernels {warm:.1f} us without fills, {warm_f:.1f} with ({len(four) - len(one)} launches in 3 runs: {', '.join(kinds)})")
    runs = []
    for n, d in four[len(one):]:
        if n == "tessera_pipeline":
            runs.append(0.0)
        if runs and n != "tessera_fill_many":
            runs[-1] += d
    if len(runs) == 3:
        print(f"{q}: warm runs {', '.join(f'{r:.1f}' for r in runs)} us without fills, median {sorted(runs)[1]:.1f}")
