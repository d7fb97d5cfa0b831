#!/usr/bin/env bash
# Run 11 of 2026-11-27 (j) at ad25675 (eager loads from a sector share of 0.25): GPU unit
# tests; `bench` in turns against the former threshold (TESSERA_EXP_EAGER_SECTORS=0.1),
# each in its own process: SSB SF20 20 warm runs × 3 rounds, TPC-H SF10 3 warm runs × 1
# round (JSON in run11-json.tgz); SSB SF1 and TPC-H SF1 answers checked.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
bash $S tests > $OUT/log11-tests.txt 2>&1
[ -d /tmp/td20/bench/ssb-sf20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera > /dev/null 2>&1
mkdir -p /tmp/j11
{
for r in 1 2 3; do
  for e in default 0.1; do
    echo "== SSB SF20, round $r, eager threshold $e"
    ( [ $e = default ] || export TESSERA_EXP_EAGER_SECTORS=$e
      $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 20 --engine tessera --json /tmp/j11/run11-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ (q|total)" )
  done
done
for e in default 0.1; do
  echo "== TPC-H SF10, eager threshold $e"
  ( [ $e = default ] || export TESSERA_EXP_EAGER_SECTORS=$e
    $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --json /tmp/j11/run11-tpch10-r1-e$e.json 2>&1 | grep -E "^│ (q|total)" )
done
echo "== SF1 answers checked (lines without a check mark only)"
for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 2 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
} > $OUT/log11-bench.txt 2>&1
tar -C /tmp/j11 -czf $OUT/run11-json.tgz .
ls -la $OUT
