#!/usr/bin/env bash
# Run 4 of 2026-12-01f (pack of a22d28b: host trace marks in the compact columns' path).
# Where SSB SF 100's first query spends its time with the defaults (lineorder compact):
# `tessera bench` of q1.1 and of q3.1, each in a new process (the cold run, then one
# warm), twice, with TESSERA_TRACE_HOST=1 (each column's read, distances, bits packed or
# runs laid out, upload).
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; command -v perf || echo "no perf"; } > $OUT/log4-trace.txt
ST=/tmp/td100/bench/ssb-sf100
grep -q lineorder $ST/manifest.json 2>/dev/null || { rm -rf /tmp/td100; mkdir -p /tmp/td100/bench; /usr/bin/time -f "gen --load %e s" $X --data-dir $ST gen ssb --sf 100 --load > /dev/null 2>> $OUT/log4-trace.txt; }
for q in q1.1 q3.1; do
  for r in 1 2; do
    echo "== $q defaults, round $r" >> $OUT/log4-trace.txt
    TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td100 bench ssb --sf 100 --runs 1 --engine tessera --queries $q 2>&1 | grep -E "^trace|^│ $q" >> $OUT/log4-trace.txt
  done
done
cat $OUT/log4-trace.txt | cut -c1-3000
date -u
