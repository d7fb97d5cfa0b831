#!/usr/bin/env bash
# Run 9 of 2026-11-27 (i): 8 items a thread for pipelines with at most one probe
# (TESSERA_EXP_SINGLE_ITEMS=8) against the default (4): SSB SF20 and TPC-H SF10 `bench`,
# each setting in its own process, two rounds in turns; EXPLAIN ANALYZE of all 22 TPC-H
# SF10 queries both ways; SF1 answers checked with 8.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
bash $S > /dev/null 2>&1  # unpacks the binary
{
for r in 1 2; do
  for e in "TESSERA_EXP_SINGLE_ITEMS=0" "TESSERA_EXP_SINGLE_ITEMS=8"; do
    echo "== round $r, $e"
    ( export $e
      $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 5 --engine tessera 2>&1 | grep -E "^│ (q|total)"
      $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera 2>&1 | grep -E "^│ (q|total)" )
  done
done
echo "== SF1 answers checked with TESSERA_EXP_SINGLE_ITEMS=8 (lines without a check mark only)"
for s in ssb tpch; do TESSERA_EXP_SINGLE_ITEMS=8 $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 2 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
} > $OUT/log9-bench.txt 2>&1
EXPS="- TESSERA_EXP_SINGLE_ITEMS=8" QUERIES="$(cd benchmarks/tpch && ls q*.sql | sed 's/.sql//' | tr '\n' ' ')" bash $S tpchexp > $OUT/log9-tpchexp.txt 2>&1
ls -la $OUT
