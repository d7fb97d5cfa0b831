#!/usr/bin/env bash
# Run 7 of 2026-11-27 (j) at 4bb7695 (run 6's pack): host timelines (TESSERA_TRACE_HOST=1)
# of SSB SF20 (10 warm runs) and TPC-H SF10 (3 warm runs), to see where the final code's
# wall time outside the kernels goes (TPC-H: 94-110 ms of wall for 42 ms of kernels).
X=/tmp/tessera-gpu/bin/tessera
S=benchmarks/device/gpu-suite.sh
[ -x $X ] || bash $S tests > $OUT/log7-tests.txt 2>&1
[ -d /tmp/td20/bench/ssb-sf20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera > /dev/null 2>&1
TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 10 --engine tessera > $OUT/log7-ssb-table.txt 2> $OUT/log7-ssb-trace.txt
TESSERA_TRACE_HOST=1 $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 4 --engine tessera > $OUT/log7-tpch-table.txt 2> $OUT/log7-tpch-trace.txt
gzip -9 $OUT/log7-*-trace.txt
ls -la $OUT
