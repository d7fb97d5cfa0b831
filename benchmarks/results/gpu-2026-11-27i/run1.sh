#!/usr/bin/env bash
# Run 1 of 2026-11-27 (i): probes far more selective than the filters before them are
# tested first (probe::early), and a lone narrowed column loaded up front is prefetched a
# word a lane. GPU unit tests; SSB SF20 and TPC-H SF10 with the default, with only the
# early probes (TESSERA_EXP_ONE_EAGER=0) and with neither (as before), each in its own
# process, two rounds in turns; SF1 answers checked with the default.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
bash $S tests > $OUT/log1-tests.txt 2>&1
{
for r in 1 2; do
  for e in "TESSERA_EXP_EARLY_PROBES=1" "TESSERA_EXP_ONE_EAGER=0" "TESSERA_EXP_EARLY_PROBES=0,TESSERA_EXP_ONE_EAGER=0"; do
    echo "== round $r, $e"
    ( for a in ${e//,/ }; do export "$a"; done
      $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 5 --engine tessera 2>&1 | grep -E "^│ (q|total)"
      $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera 2>&1 | grep -E "^│ (q|total)" )
  done
done
echo "== SF1 answers checked, the default (lines without a check mark only)"
for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 2 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
} > $OUT/log1-bench.txt 2>&1
ls -la $OUT
