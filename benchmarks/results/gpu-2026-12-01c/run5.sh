#!/usr/bin/env bash
# Run 5 of 2026-12-01c (pack B, the defaults as kept): wall-clock figures. SSB SF 20,
# 15 warm runs a process, 6 rounds in turns: d (the defaults) and g0
# (TESSERA_EXP_GROUPED_QUEUE=0); then TPC-H SF 10, 5 warm runs, Tessera alone.
S=benchmarks/device/gpu-suite.sh
SETTINGS="d g0:TESSERA_EXP_GROUPED_QUEUE=0" ROUNDS=6 SF=20 bash $S turns 2>&1 | grep -vE "^(WARNING|ERROR).*(whl|pip|site)" > $OUT/log5-turns.txt
tar -C $OUT -czf $OUT/run5-json.tgz $(cd $OUT && ls turns-*.json) && rm -f $OUT/turns-*.json
X=/tmp/tessera-gpu/bin/tessera
$X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 5 --engine tessera --json $OUT/tpch10-run5.json 2>&1 | grep -v '^\s*$' > $OUT/log5-tpch10.txt
cat $OUT/log5-turns.txt $OUT/log5-tpch10.txt
date -u
