#!/usr/bin/env bash
# Run 9 of 2026-11-28 at the LIMIT-selection commit: GPU unit tests; the GPU-result slt
# files on the GPU and the CPU backend; TPC-H SF1 and SSB SF1 answers checked;
# EXPLAIN ANALYZE of TPC-H SF10 (per pipeline, all 22); `bench` TPC-H SF10 3 warm runs x
# 2 rounds and SSB SF20 20 warm runs x 1 round.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/log9-tests.txt
bash $S tests >> $OUT/log9-tests.txt 2>&1
mkdir -p /tmp/res9
OUT=/tmp/res9 bash $S results > /tmp/res9/log9-results.txt 2>&1
tar -C /tmp/res9 -czf $OUT/run9-results.tgz .
grep -E "identical|errors:|^[<>]" /tmp/res9/log9-results.txt | head -40 > $OUT/log9-results-summary.txt
{
echo "== SF1 answers checked (lines without a check mark only)"
for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
} > $OUT/log9-sf1.txt 2>&1
QUERIES="q01 q02 q03 q04 q05 q06 q07 q08 q09 q10 q11 q12 q13 q14 q15 q16 q17 q18 q19 q20 q21 q22" bash $S tpchexp > $OUT/log9-tpchexp.txt 2>&1
mkdir -p /tmp/r9
{
for r in 1 2; do
  echo "== TPC-H SF10, round $r"
  $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --json /tmp/r9/run9-tpch10-r$r-edefault.json 2>&1 | grep -E "^│ (q|total)"
done
echo "== SSB SF20, round 1"
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 20 --engine tessera --json /tmp/r9/run9-ssb20-r1-edefault.json 2>&1 | grep -E "^│ (q|total)"
} > $OUT/log9-bench.txt 2>&1
tar -C /tmp/r9 -czf $OUT/run9-json.tgz .
ls -la $OUT
