#!/usr/bin/env bash
# Run 2 of 2026-12-01d (pack B: queued rows as `int`s where the table's rows fit 32 bits,
# `Deferral::row32`; TESSERA_EXP_QUEUE_ROWS32=0 queues `long long` rows, as before).
# GPU unit tests; SSB and TPC-H SF 1 answers of the CPU backend, d and c; SSB SF 20 (3
# rounds, 5 EXPLAIN ANALYZE a query) and SF 100 (2 rounds, 3) kernel times in turns: d,
# dr0, c, cr0.
S=benchmarks/device/gpu-suite.sh
R0=TESSERA_EXP_QUEUE_ROWS32=0
{ bash $S tests answers1; } 2>&1 | grep -vE "^(WARNING|ERROR).*(whl|pip|site)" > $OUT/log2-tests.txt
VARIANTS="d dr0:$R0 c:always cr0:always,$R0" SF=20 bash $S variants > $OUT/log2-20.txt 2>&1
mkdir -p $OUT/r2 && mv $OUT/medians-* $OUT/r2/ && gzip -c $OUT/variants-ssb20.txt > $OUT/r2/variants-ssb20.txt.gz && rm -f $OUT/variants-*
rm -rf /tmp/tdv-ssb20
VARIANTS="d dr0:$R0 c:always cr0:always,$R0" SF=100 ROUNDS=2 RUNS=3 bash $S variants > $OUT/log2-100.txt 2>&1
mv $OUT/medians-* $OUT/r2/ && gzip -c $OUT/variants-ssb100.txt > $OUT/r2/variants-ssb100.txt.gz && rm -f $OUT/variants-*
cat $OUT/log2-tests.txt; grep -hE "gen --load" $OUT/log2-*.txt; cat $OUT/r2/medians-*
date -u
