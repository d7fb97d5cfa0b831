#!/usr/bin/env bash
# Run 3 of 2026-11-27 (h), at the commit making narrowed columns and their word loads the
# default: GPU unit tests; SSB SF20 and TPC-H SF10 `bench` with the default and plain
# (TESSERA_EXP_NARROW=0), each in its own process, two rounds in turns, every query's
# line; then per-pipeline kernel times of all 22 TPC-H SF10 queries both ways; random
# queries (seeds 1940-1947: two packed, four narrowed, two plain).
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
bash $S tests > $OUT/log3-tests.txt 2>&1
{
for r in 1 2; do
  for e in "TESSERA_EXP_NARROW=1" "TESSERA_EXP_NARROW=0"; do
    echo "== round $r, $e"
    ( export $e
      $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 5 --engine tessera 2>&1 | grep -E "^│ (q|total)"
      $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera 2>&1 | grep -E "^│ (q|total)" )
  done
done
} > $OUT/log3-bench.txt 2>&1
Q=$(cd benchmarks/tpch && ls q*.sql | sed 's/.sql//' | tr '\n' ' ')
EXPS="- TESSERA_EXP_NARROW=0" QUERIES="$Q" bash $S tpchexp > $OUT/log3-tpchexp.txt 2>&1
SEEDS=8 SEED0=1939 DIFFTEST_SECONDS=120 PACKED_SEEDS=2 NARROW_SEEDS=4 bash $S difftests > $OUT/log3-difftests.txt 2>&1
ls -la $OUT
