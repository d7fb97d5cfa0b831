#!/usr/bin/env bash
# Run 5 of 2026-11-27 (g): packed columns with multi-probe pipelines at 2 items a thread
# (the default) and at 4 (TESSERA_EXP_PACKED_ITEMS=4): TPC-H SF10 per-pipeline kernel
# times (EXPLAIN ANALYZE, all 22 queries), TPC-H SF10 and SSB SF20 `bench` both ways in
# turns, each in its own process; SF1 answers checked with 4.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
Q="q01 q02 q03 q04 q05 q06 q07 q08 q09 q10 q11 q12 q13 q14 q15 q16 q17 q18 q19 q20 q21 q22"
EXPS="TESSERA_EXP_PACKED=1 TESSERA_EXP_PACKED=1,TESSERA_EXP_PACKED_ITEMS=4" QUERIES="$Q" bash $S tpchexp > $OUT/log5-tpchexp.txt 2>&1
{
for r in 1 2; do
  for e in 0 4; do
    echo "== round $r, TESSERA_EXP_PACKED=1 TESSERA_EXP_PACKED_ITEMS=$e"
    ( export TESSERA_EXP_PACKED=1 TESSERA_EXP_PACKED_ITEMS=$e
      $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera 2>&1 | grep -E "^│ total"
      $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 5 --engine tessera 2>&1 | grep -E "^│ (q|total)" )
  done
done
echo "== SF1 answers checked, TESSERA_EXP_PACKED=1 TESSERA_EXP_PACKED_ITEMS=4"
( export TESSERA_EXP_PACKED=1 TESSERA_EXP_PACKED_ITEMS=4; for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 2 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done )
} > $OUT/log5-bench.txt 2>&1
ls -la $OUT
