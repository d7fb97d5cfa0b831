#!/usr/bin/env bash
# Run 4 of 2026-11-28d, run 3's pack: where SSB SF20's host time before each probe goes
# with the build cache on: one traced process (TESSERA_TRACE_HOST=1, 8 warm runs), each
# step's median time after the one before it (trace.py), and the phases.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 8 --engine tessera 2>&1 | grep "^trace" | gzip > $OUT/log4-trace.txt.gz
python3 benchmarks/results/gpu-2026-11-27j/trace.py $OUT/log4-trace.txt.gz > $OUT/log4-trace-steps.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/trace.py --phases $OUT/log4-trace.txt.gz > $OUT/log4-trace-phases.txt 2>&1
cat $OUT/log4-trace-steps.txt $OUT/log4-trace-phases.txt
