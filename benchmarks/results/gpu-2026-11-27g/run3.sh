#!/usr/bin/env bash
# Run 3 of 2026-11-27 (g): more resident blocks (TESSERA_EXP_MIN_BLOCKS, registers capped)
# for plain, narrowed and packed columns: SSB SF20 EXPLAIN ANALYZE per setting, then
# SSB SF20 `bench` (5 warm runs) per setting, each in its own process; TPC-H SF10 default
# and with 12 blocks; SSB SF1 and TPC-H SF1 answers checked with 12 and 16 blocks.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
export STORE=/tmp/td20/bench/ssb-sf20
SETS="- TESSERA_EXP_MIN_BLOCKS=12 TESSERA_EXP_MIN_BLOCKS=16 TESSERA_EXP_NARROW=1 TESSERA_EXP_NARROW=1,TESSERA_EXP_MIN_BLOCKS=12 TESSERA_EXP_NARROW=1,TESSERA_EXP_MIN_BLOCKS=16 TESSERA_EXP_PACKED=1 TESSERA_EXP_PACKED=1,TESSERA_EXP_MIN_BLOCKS=12"
EXPS="$SETS" ITEMS=0 bash $S exp > $OUT/log3-exp.txt 2>&1
{
for e in $SETS; do
  echo "== SSB SF20 bench, $e"
  ( [ "$e" = - ] || for a in ${e//,/ }; do export "$a"; done
    $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 5 --engine tessera 2>&1 | grep -E "^│ (q|total)" )
done
for e in - TESSERA_EXP_MIN_BLOCKS=12 TESSERA_EXP_MIN_BLOCKS=16; do
  echo "== TPC-H SF10 bench, $e"
  ( [ "$e" = - ] || export "$e"
    $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera 2>&1 | grep -E "^│ total" )
done
for e in TESSERA_EXP_MIN_BLOCKS=12 TESSERA_EXP_MIN_BLOCKS=16; do
  echo "== SF1 answers checked, $e"
  ( export "$e"; for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 2 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done )
done
} > $OUT/log3-bench.txt 2>&1
ls -la $OUT
