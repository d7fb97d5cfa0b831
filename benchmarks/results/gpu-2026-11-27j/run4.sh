#!/usr/bin/env bash
# Run 4 of 2026-11-27 (j) at 080fcdc: the host-time changes against the code as before
# them (TESSERA_EXP_SHORT_LOOKUPS=0: placements looked up by the plan's text, the
# manifest read for each pipeline; the one column-cache lock at admission is not
# switchable), each in its own process, in turns. GPU unit tests; SSB SF20 `bench` with
# 20 warm runs, three rounds; TPC-H SF10 with 3 warm runs, two rounds; per-run times in
# the JSON files (run4-*.json).
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
bash $S tests > $OUT/log4-tests.txt 2>&1
[ -d /tmp/td20/bench/ssb-sf20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera > /dev/null 2>&1
{
for r in 1 2 3; do
  for e in 1 0; do
    echo "== SSB SF20, round $r, TESSERA_EXP_SHORT_LOOKUPS=$e"
    TESSERA_EXP_SHORT_LOOKUPS=$e $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 20 --engine tessera --json $OUT/run4-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ (q|total)"
  done
done
for r in 1 2; do
  for e in 1 0; do
    echo "== TPC-H SF10, round $r, TESSERA_EXP_SHORT_LOOKUPS=$e"
    TESSERA_EXP_SHORT_LOOKUPS=$e $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --json $OUT/run4-tpch10-r$r-e$e.json 2>&1 | grep -E "^│ (q|total)"
  done
done
} > $OUT/log4-bench.txt 2>&1
ls -la $OUT
