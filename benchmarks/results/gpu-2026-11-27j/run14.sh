#!/usr/bin/env bash
# Run 14 of 2026-11-27 (j) at d6864d1: kernel times that count large fills (64 MiB and
# more) and a GPU sort's whole chain. GPU unit tests; SSB SF20 `bench` 20 warm runs × 2
# rounds and TPC-H SF10 3 warm runs (JSON in run14-json.tgz); EXPLAIN ANALYZE phases of
# TPC-H SF10 q03, q07, q08, q13; SSB SF1 and TPC-H SF1 answers checked.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
bash $S tests > $OUT/log14-tests.txt 2>&1
[ -d /tmp/td20/bench/ssb-sf20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera > /dev/null 2>&1
mkdir -p /tmp/j14
{
for r in 1 2; do
  echo "== SSB SF20, round $r"
  $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 20 --engine tessera --json /tmp/j14/run14-ssb20-r$r-edefault.json 2>&1 | grep -E "^│ (q|total)"
done
echo "== TPC-H SF10"
$X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --json /tmp/j14/run14-tpch10-r1-edefault.json 2>&1 | grep -E "^│ (q|total)"
echo "== SF1 answers checked (lines without a check mark only)"
for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 2 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
} > $OUT/log14-bench.txt 2>&1
tar -C /tmp/j14 -czf $OUT/run14-json.tgz .
QUERIES="q03 q07 q08 q13" bash $S phases > $OUT/log14-phases.txt 2>&1
ls -la $OUT
