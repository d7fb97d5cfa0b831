#!/usr/bin/env bash
# Run 6 of 2026-11-27 (g), at the commit that gives multi-probe pipelines over packed
# columns 4 items where their tables stay in L2: GPU unit tests; TPC-H SF10 per-pipeline
# kernel times packed with the new rule and with 2 items (TESSERA_EXP_PACKED_ITEMS=2, as
# before); SSB SF20 and TPC-H SF10 packed `bench` both ways, and plain; SF1 answers
# checked packed and plain.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
bash $S tests > $OUT/log6-tests.txt 2>&1
Q="q02 q03 q05 q07 q08 q09 q10 q18 q21"
EXPS="TESSERA_EXP_PACKED=1 TESSERA_EXP_PACKED=1,TESSERA_EXP_PACKED_ITEMS=2" QUERIES="$Q" bash $S tpchexp > $OUT/log6-tpchexp.txt 2>&1
{
for e in "TESSERA_EXP_PACKED=1" "TESSERA_EXP_PACKED=1 TESSERA_EXP_PACKED_ITEMS=2" "TESSERA_EXP_PACKED=0"; do
  echo "== $e"
  ( export $e
    $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 5 --engine tessera 2>&1 | grep -E "^│ (q|total)"
    $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera 2>&1 | grep -E "^│ total" )
done
for e in "TESSERA_EXP_PACKED=1" "TESSERA_EXP_PACKED=0"; do
  echo "== SF1 answers checked, $e"
  ( export $e; for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 2 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done )
done
} > $OUT/log6-bench.txt 2>&1
ls -la $OUT
