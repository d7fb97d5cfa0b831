#!/usr/bin/env bash
# Run 5 of 2026-12-01d (pack D, the code as committed at the end: rows queued as `int`s,
# one form for every drain). GPU unit tests; SSB and TPC-H SF 1 answers of the CPU
# backend, d and c; SSB SF 20 (3 rounds, 5 EXPLAIN ANALYZE a query) and SF 100 (2 rounds,
# 3) kernel times in turns: d, c; wall clock: SSB SF 20, 15 warm runs a process, 4 rounds
# in turns: d and r0 (TESSERA_EXP_QUEUE_ROWS32=0); TPC-H SF 10, 5 warm runs, Tessera alone.
S=benchmarks/device/gpu-suite.sh
{ bash $S tests answers1; } 2>&1 | grep -vE "^(WARNING|ERROR).*(whl|pip|site)" > $OUT/log5-tests.txt
VARIANTS="d c:always" SF=20 bash $S variants > $OUT/log5-20.txt 2>&1
mkdir -p $OUT/r5 && mv $OUT/medians-* $OUT/r5/ && gzip -c $OUT/variants-ssb20.txt > $OUT/r5/variants-ssb20.txt.gz && rm -f $OUT/variants-*
rm -rf /tmp/tdv-ssb20
VARIANTS="d c:always" SF=100 ROUNDS=2 RUNS=3 bash $S variants > $OUT/log5-100.txt 2>&1
mv $OUT/medians-* $OUT/r5/ && gzip -c $OUT/variants-ssb100.txt > $OUT/r5/variants-ssb100.txt.gz && rm -f $OUT/variants-*
rm -rf /tmp/tdv-ssb100
SETTINGS="d r0:TESSERA_EXP_QUEUE_ROWS32=0" ROUNDS=4 SF=20 bash $S turns 2>&1 | grep -vE "^(WARNING|ERROR).*(whl|pip|site)" > $OUT/log5-turns.txt
tar -C $OUT -czf $OUT/run5-json.tgz $(cd $OUT && ls turns-*.json) && rm -f $OUT/turns-*.json
rm -rf /tmp/tdturns20
X=/tmp/tessera-gpu/bin/tessera
$X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 5 --engine tessera --json $OUT/tpch10-run5.json 2>&1 | grep -v '^\s*$' > $OUT/log5-tpch10.txt
cat $OUT/log5-tests.txt; grep -hE "gen --load" $OUT/log5-*.txt; cat $OUT/r5/medians-*; cat $OUT/log5-turns.txt | tail -8; tail -6 $OUT/log5-tpch10.txt
date -u
