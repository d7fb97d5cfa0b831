#!/usr/bin/env bash
# Run 5 of 2026-12-01e (pack C: pack B plus drain loops kept rolled for warp queues that
# take at most 2% of the rows, defer::ROLLED_DRAIN_MAX_SHARE). GPU unit tests; SSB and
# TPC-H SF 1 answers of the CPU backend, d and c; kernel times in turns, d, dR0, c, cR0
# (R0: TESSERA_EXP_ROLLED_DRAIN_MAX=0, no drain loop rolled, as before): SSB SF 20 (3
# rounds, 5 EXPLAIN ANALYZE a query), SSB SF 100 (2 rounds, 3), TPC-H SF 10 d and dR0
# (2 rounds, 3).
S=benchmarks/device/gpu-suite.sh
R0=TESSERA_EXP_ROLLED_DRAIN_MAX=0
{ bash $S tests answers1; } 2>&1 | grep -vE "^(WARNING|ERROR).*(whl|pip|site)" > $OUT/log5-tests.txt
VARIANTS="d dR0:$R0 c:always cR0:always,$R0" SF=20 bash $S variants > $OUT/log5-20.txt 2>&1
mkdir -p $OUT/r5 && mv $OUT/medians-* $OUT/r5/ && gzip -c $OUT/variants-ssb20.txt > $OUT/r5/variants-ssb20.txt.gz && rm -f $OUT/variants-*
rm -rf /tmp/tdv-ssb20
VARIANTS="d dR0:$R0 c:always cR0:always,$R0" SF=100 ROUNDS=2 RUNS=3 bash $S variants > $OUT/log5-100.txt 2>&1
mv $OUT/medians-* $OUT/r5/ && gzip -c $OUT/variants-ssb100.txt > $OUT/r5/variants-ssb100.txt.gz && rm -f $OUT/variants-*
rm -rf /tmp/tdv-ssb100
VARIANTS="d dR0:$R0" SUITE=tpch SF=10 ROUNDS=2 RUNS=3 bash $S variants > $OUT/log5-tpch10.txt 2>&1
mv $OUT/medians-* $OUT/r5/ && gzip -c $OUT/variants-tpch10.txt > $OUT/r5/variants-tpch10.txt.gz && rm -f $OUT/variants-*
tail -8 $OUT/log5-tests.txt; grep -hE "gen --load" $OUT/log5-*.txt; cat $OUT/r5/medians-*
date -u
