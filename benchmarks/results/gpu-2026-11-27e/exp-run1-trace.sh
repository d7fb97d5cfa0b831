#!/usr/bin/env bash
# Experiment: per-call host timings of SSB SF20's GPU pipelines (TESSERA_TRACE_CALLS=1).
set -u
mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf - && X=/tmp/tessera-gpu/bin/tessera
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
S=/tmp/td20/bench/ssb-sf20
[ -d $S ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera 2>&1 | tail -3
f=/tmp/q.sql; : > $f
for r in 1 2 3 4; do for q in benchmarks/ssb/q*.sql; do sed '/^--/d' $q >> $f; done; done
echo "== trace, 4 rounds of the 13 queries"
TESSERA_TRACE_CALLS=1 $X --format csv --data-dir $S sql $f 2> $OUT/trace.txt > /dev/null
tail -n 74 $OUT/trace.txt
echo "== same with one stream"
TESSERA_EXP_ONE_STREAM=1 TESSERA_TRACE_CALLS=1 $X --format csv --data-dir $S sql $f 2> $OUT/trace1.txt > /dev/null
tail -n 37 $OUT/trace1.txt
