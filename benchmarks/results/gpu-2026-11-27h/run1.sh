#!/usr/bin/env bash
# Run 1 of 2026-11-27 (h): GPU unit tests; SSB SF20 and TPC-H SF10 `bench` plain,
# narrowed (TESSERA_EXP_NARROW=1) and narrowed with word loads (TESSERA_EXP_NARROW_WORDS=1),
# each in its own process, two rounds in turns. Run from the project root on the device
# with carry [".gpu"].
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
bash $S tests > $OUT/log1-tests.txt 2>&1
{
for r in 1 2; do
  for e in "TESSERA_EXP_NARROW=0" "TESSERA_EXP_NARROW=1" "TESSERA_EXP_NARROW=1 TESSERA_EXP_NARROW_WORDS=1"; do
    echo "== round $r, $e"
    ( export $e
      $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 5 --engine tessera 2>&1 | grep -E "^│ (q|total)"
      $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera 2>&1 | grep -E "^│ total" )
  done
done
} > $OUT/log1-bench.txt 2>&1
ls -la $OUT
