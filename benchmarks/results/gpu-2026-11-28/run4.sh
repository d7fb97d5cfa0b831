#!/usr/bin/env bash
# Run 4 of 2026-11-28, right after run 3 on its machine: TPC-H SF10 per-pipeline kernels
# (EXPLAIN ANALYZE, all 22 queries) with the defaults and with the small records and
# lean items switched off; then `bench` TPC-H SF10 3 warm runs, defaults and both off,
# in turns, two rounds.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
QUERIES="q01 q02 q03 q04 q05 q06 q07 q08 q09 q10 q11 q12 q13 q14 q15 q16 q17 q18 q19 q20 q21 q22" \
EXPS="- TESSERA_EXP_SMALL_RECORDS_MAX=0,TESSERA_EXP_LEAN_ITEMS=0" bash $S tpchexp > $OUT/log4-tpchexp.txt 2>&1
mkdir -p /tmp/r4
{
for r in 1 2; do
  for e in default old; do
    echo "== TPC-H SF10, round $r, $e"
    ( [ $e = default ] || export TESSERA_EXP_SMALL_RECORDS_MAX=0 TESSERA_EXP_LEAN_ITEMS=0
      $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --json /tmp/r4/run4-tpch10-r$r-e$e.json 2>&1 | grep -E "^│ (q|total)" )
  done
done
} > $OUT/log4-bench.txt 2>&1
tar -C /tmp/r4 -czf $OUT/run4-json.tgz .
ls -la $OUT
