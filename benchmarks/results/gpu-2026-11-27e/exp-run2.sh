#!/usr/bin/env bash
# Experiment run 2: GPU unit tests, a host-time trace of SSB SF20, A/B of fills+event pool.
set -u
bash benchmarks/device/gpu-suite.sh tests 2>&1 | grep -v "whl"
X=/tmp/tessera-gpu/bin/tessera
S=/tmp/td20/bench/ssb-sf20
[ -d $S ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera 2>&1 | tail -3
f=/tmp/q.sql; : > $f
for r in 1 2 3 4; do for q in benchmarks/ssb/q*.sql; do sed '/^--/d' $q >> $f; done; done
for mode in default TESSERA_EXP_FILLS=0; do
  echo "== trace, 4 rounds of the 13 queries, $mode"
  ( [ $mode = default ] || export $mode; TESSERA_TRACE_CALLS=1 $X --format csv --data-dir $S sql $f 2> $OUT/trace-$mode.txt > /dev/null )
  tail -n 13 $OUT/trace-$mode.txt
done
AB=TESSERA_EXP_FILLS=0 ROUNDS=${ROUNDS:-3} bash benchmarks/device/gpu-suite.sh ab 2>&1 | grep -v "whl"
