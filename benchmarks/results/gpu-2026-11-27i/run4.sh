#!/usr/bin/env bash
# Run 4 of 2026-11-27 (i) at c4d7d66: selection flags as int and the warp vote that skips
# a tile's remaining stages. GPU unit tests; SSB SF20 and TPC-H SF10 with the default,
# without the vote (TESSERA_EXP_WARP_SKIP=0), with bool flags (TESSERA_EXP_SEL_BOOL=1)
# and as before this session (bool flags, no vote, no early probes), each in its own
# process, two rounds in turns; SF1 answers checked with the default.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
bash $S tests > $OUT/log4-tests.txt 2>&1
{
for r in 1 2; do
  for e in "TESSERA_EXP_WARP_SKIP=1" "TESSERA_EXP_WARP_SKIP=0" "TESSERA_EXP_SEL_BOOL=1" "TESSERA_EXP_SEL_BOOL=1,TESSERA_EXP_WARP_SKIP=0,TESSERA_EXP_EARLY_PROBES=0"; do
    echo "== round $r, $e"
    ( for a in ${e//,/ }; do export "$a"; done
      $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 5 --engine tessera 2>&1 | grep -E "^│ (q|total)"
      $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera 2>&1 | grep -E "^│ (q|total)" )
  done
done
echo "== SF1 answers checked, the default (lines without a check mark only)"
for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 2 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
} > $OUT/log4-bench.txt 2>&1
ls -la $OUT
