#!/usr/bin/env bash
# Run 1 of 2026-11-27 (j): where SSB SF20's wall time outside the kernels goes. GPU unit
# tests; SSB SF20 `bench` (5 runs) as it is, then with TESSERA_TRACE_HOST=1 (10 runs:
# each run's host timeline, a line per run on stderr), then as it is again.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
bash $S tests > $OUT/log1-tests.txt 2>&1
[ -d /tmp/td20/bench/ssb-sf20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera > /dev/null 2>&1
{
echo "== as it is"
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 5 --engine tessera 2>&1 | grep -E "^│ (q|total)"
echo "== TESSERA_TRACE_HOST=1"
TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 10 --engine tessera > $OUT/log1-trace-table.txt 2> $OUT/log1-trace.txt
grep -E "^│ (q|total)" $OUT/log1-trace-table.txt
echo "== as it is"
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 5 --engine tessera 2>&1 | grep -E "^│ (q|total)"
} > $OUT/log1-bench.txt 2>&1
ls -la $OUT
