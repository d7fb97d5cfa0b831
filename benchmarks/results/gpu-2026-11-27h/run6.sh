#!/usr/bin/env bash
# Run 6 of 2026-11-27 (h), the final code: `bench` times a run up to the engine's result
# batches (rendering them as text for the check comes after), and tessera_word_pick takes
# a distance out of its word by one byte permute. GPU unit tests; SSB SF20 and TPC-H
# SF10 with the default and plain (TESSERA_EXP_NARROW=0), each in its own process, two
# rounds in turns; SF1 answers checked; random queries (seeds 1948-1955: two packed,
# four narrowed, two plain).
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
bash $S tests > $OUT/log6-tests.txt 2>&1
{
for r in 1 2; do
  for e in "TESSERA_EXP_NARROW=1" "TESSERA_EXP_NARROW=0"; do
    echo "== round $r, $e"
    ( export $e
      $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 5 --engine tessera 2>&1 | grep -E "^│ (q|total)"
      $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera 2>&1 | grep -E "^│ (q|total)" )
  done
done
echo "== SF1 answers checked, the default"
for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 2 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
} > $OUT/log6-bench.txt 2>&1
SEEDS=8 SEED0=1947 DIFFTEST_SECONDS=120 PACKED_SEEDS=2 NARROW_SEEDS=4 bash $S difftests > $OUT/log6-difftests.txt 2>&1
ls -la $OUT
