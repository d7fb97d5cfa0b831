#!/usr/bin/env bash
# Run 8 of 2026-11-28 at the EXTRACT-stats commit (q07, q08, q09 group into perfect-hash
# domains): GPU unit tests; TPC-H SF1 and SSB SF1 answers checked; EXPLAIN ANALYZE of
# TPC-H SF10 (per pipeline, all 22); `bench` TPC-H SF10 3 warm runs x 2 rounds and SSB
# SF20 20 warm runs x 2 rounds with the defaults.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/log8-tests.txt
bash $S tests >> $OUT/log8-tests.txt 2>&1
{
echo "== SF1 answers checked (lines without a check mark only)"
for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
} > $OUT/log8-sf1.txt 2>&1
QUERIES="q01 q02 q03 q04 q05 q06 q07 q08 q09 q10 q11 q12 q13 q14 q15 q16 q17 q18 q19 q20 q21 q22" bash $S tpchexp > $OUT/log8-tpchexp.txt 2>&1
mkdir -p /tmp/r8
{
for r in 1 2; do
  echo "== TPC-H SF10, round $r"
  $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --json /tmp/r8/run8-tpch10-r$r-edefault.json 2>&1 | grep -E "^│ (q|total)"
  echo "== SSB SF20, round $r"
  $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 20 --engine tessera --json /tmp/r8/run8-ssb20-r$r-edefault.json 2>&1 | grep -E "^│ (q|total)"
done
} > $OUT/log8-bench.txt 2>&1
tar -C /tmp/r8 -czf $OUT/run8-json.tgz .
ls -la $OUT
