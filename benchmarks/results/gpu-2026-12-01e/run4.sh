#!/usr/bin/env bash
# Run 4 of 2026-12-01e (pack B). Wall clock: SSB SF 20, 15 warm runs a process, 4 rounds
# in turns: d and dB1 (TESSERA_EXP_BITMAP_COST=1); TPC-H SF 10, 5 warm runs, Tessera alone.
S=benchmarks/device/gpu-suite.sh
SETTINGS="d dB1:TESSERA_EXP_BITMAP_COST=1" ROUNDS=4 SF=20 bash $S turns 2>&1 | grep -vE "^(WARNING|ERROR).*(whl|pip|site)" > $OUT/log4-turns.txt
tar -C $OUT -czf $OUT/run4-json.tgz $(cd $OUT && ls turns-*.json) && rm -f $OUT/turns-*.json
rm -rf /tmp/tdturns20
X=/tmp/tessera-gpu/bin/tessera
$X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 5 --engine tessera --json $OUT/tpch10-run4.json 2>&1 | grep -v '^\s*$' > $OUT/log4-tpch10.txt
tail -20 $OUT/log4-turns.txt; tail -6 $OUT/log4-tpch10.txt
date -u
