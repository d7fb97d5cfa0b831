#!/usr/bin/env python3
"""Summarizes Nsight Compute's per-SASS-instruction CSV (`ncu --page source --csv
--print-source sass`): the instructions executed and warp stall samples per opcode, and
the instructions with the most stall samples, so that a device run can bring back a page
of text instead of the CSV.

    python3 benchmarks/tools/sass_summary.py q1.1-sass.csv [top]
"""
import csv
import sys
from collections import defaultdict


def number(s):
    try:
        return float(s.replace(",", ""))
    except ValueError:
        return 0.0


def main():
    path, top = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 40
    with open(path, newline="") as f:
        table = [r for r in csv.reader(f) if r]
    # A preamble (the kernel's name) may come before the header: the first row naming
    # the source column.
    at = next((i for i, r in enumerate(table) if "Source" in r), None)
    if at is None:
        print("no header with a Source column")
        return
    header = table[at]
    rows = [dict(zip(header, r)) for r in table[at + 1:] if len(r) >= len(header) // 2]
    if not rows:
        print("no rows")
        return
    cols = [c for c in rows[0].keys() if c]
    def col(*words):
        for c in cols:
            if all(w.lower() in c.lower() for w in words):
                return c
        return None
    src = col("source")
    executed = col("instructions executed") or col("warp", "executed")
    stalls = col("stall sampling (all") or col("sampling", "all")
    print("columns:", ", ".join(cols[:12]))
    per_op = defaultdict(lambda: [0.0, 0.0, 0])
    for r in rows:
        text = (r.get(src) or "").strip()
        op = text.split()[0] if text else "?"
        if op.startswith("@"):
            op = text.split()[1] if len(text.split()) > 1 else op
        op = op.split(".")[0]
        per_op[op][0] += number(r.get(executed, "0") or "0")
        per_op[op][1] += number(r.get(stalls, "0") or "0")
        per_op[op][2] += 1
    total_exec = sum(v[0] for v in per_op.values()) or 1
    total_stall = sum(v[1] for v in per_op.values()) or 1
    print(f"warp instructions executed: {total_exec:,.0f}; stall samples: {total_stall:,.0f}")
    print(f"{'opcode':10} {'executed':>14} {'%':>6} {'stalls':>10} {'%':>6} {'static':>6}")
    for op, (e, s, n) in sorted(per_op.items(), key=lambda kv: -kv[1][0])[:30]:
        print(f"{op:10} {e:14,.0f} {100*e/total_exec:6.1f} {s:10,.0f} {100*s/total_stall:6.1f} {n:6d}")
    print(f"\nthe {top} instructions with the most stall samples:")
    ranked = sorted(rows, key=lambda r: -number(r.get(stalls, "0") or "0"))[:top]
    for r in ranked:
        print(f"{number(r.get(stalls,'0') or '0'):8,.0f} {number(r.get(executed,'0') or '0'):12,.0f}  {(r.get(src) or '').strip()[:90]}")


if __name__ == "__main__":
    main()
