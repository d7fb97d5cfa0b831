#!/usr/bin/env bash
# Run 5 of 2026-11-27 (h): the first query in a new process with narrowed columns (the
# default) and at their widths (TESSERA_EXP_NARROW=0), in turns, three rounds (SSB SF20
# q1.1 and q4.3, TPC-H SF10 q01; kernel disk cache warm); then Nsight Compute's
# per-SASS tables of SSB q3.2's probe kernel both ways (q3.2 is 10% slower narrowed).
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
bash $S > /dev/null 2>&1  # unpacks the binary
[ -d /tmp/td20/bench/ssb-sf20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera > /dev/null 2>&1
[ -d /tmp/tdh10/bench/tpch-sf10 ] || $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q01 > /dev/null 2>&1
cold() {  # $1: store, $2: query file, $3: label
  local s e
  s=$(date +%s.%N)
  $X --format csv --data-dir $1 -c "EXPLAIN ANALYZE $(sed '/^--/d' $2)" > /tmp/cold.txt 2>&1
  e=$(date +%s.%N)
  echo "$3: process $(python3 -c "print(round($e - $s, 3))") s; $(grep -oE 'query: [0-9.]+ ms wall|planning [0-9.]+ ms|columns found at [0-9.]+ ms|rror.*' /tmp/cold.txt | tr '\n' ' ')"
}
{
for r in 1 2 3; do
  for n in 1 0; do
    export TESSERA_EXP_NARROW=$n
    cold /tmp/td20/bench/ssb-sf20 benchmarks/ssb/q1.1.sql "round $r narrow=$n ssb q1.1"
    cold /tmp/td20/bench/ssb-sf20 benchmarks/ssb/q4.3.sql "round $r narrow=$n ssb q4.3"
    cold /tmp/tdh10/bench/tpch-sf10 benchmarks/tpch/q01.sql "round $r narrow=$n tpch q01"
  done
done
unset TESSERA_EXP_NARROW
} > $OUT/log5-cold.txt 2>&1
ln -sfn /tmp/td20/bench/ssb-sf20 /tmp/tdp
for n in 1 0; do
  ( export TESSERA_EXP_NARROW=$n; SOURCE="q3.2:3" bash $S source > $OUT/log5-source-q32-narrow$n.txt 2>&1 )
  rm -f $OUT/ncu/*.ncu-rep; mv $OUT/ncu $OUT/ncu-narrow$n
done
tar czf $OUT/run5-sass.tgz -C $OUT ncu-narrow1 ncu-narrow0 && rm -rf $OUT/ncu-*
ls -la $OUT
