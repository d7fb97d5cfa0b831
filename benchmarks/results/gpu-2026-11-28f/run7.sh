#!/usr/bin/env bash
# Run 7 of 2026-11-28f, the pack with finer trace marks (admission's parts, each result
# column built, each Arrow batch column kept or cast): two traced SSB SF20 processes of 15
# warm runs, each step's median time (../gpu-2026-11-27j/trace.py).
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
[ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
T=benchmarks/results/gpu-2026-11-27j/trace.py
for p in 1 2; do
  TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera 2>&1 | grep "^trace" | gzip > $OUT/log7-trace-p$p.txt.gz
  { python3 $T $OUT/log7-trace-p$p.txt.gz; python3 $T --phases $OUT/log7-trace-p$p.txt.gz; } > $OUT/log7-trace-table-p$p.txt 2>&1
  grep "^sum over" $OUT/log7-trace-table-p$p.txt
done
grep -E "^q4.3|^q3.2|^q2.1" -A1 $OUT/log7-trace-table-p1.txt | head -12
date -u
