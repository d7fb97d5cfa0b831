#!/usr/bin/env bash
# Run 2 of 2026-12-01c (pack B: grouped queues on by default where `defer::early_split`
# allows them: a shared direct table, or compact columns read after the test and at most
# 5% of the queued rows reaching the global arrays; TESSERA_EXP_GROUPED_QUEUE=0 as before).
# GPU unit tests; SSB and TPC-H SF 1 answers of the CPU backend, d and c; SSB SF 20 (3
# rounds, 5 EXPLAIN ANALYZE a query) and SF 100 (2 rounds, 3) kernel times in turns: d,
# dg0, c, cg0; TPC-H SF 10 (2 rounds, 3): d, dg0.
S=benchmarks/device/gpu-suite.sh
G0=TESSERA_EXP_GROUPED_QUEUE=0
{ bash $S tests answers1; } 2>&1 | grep -vE "^(WARNING|ERROR).*(whl|pip|site)" > $OUT/log2-tests.txt
VARIANTS="d dg0:$G0 c:always cg0:always,$G0" SF=20 bash $S variants > $OUT/log2-20.txt 2>&1
VARIANTS="d dg0:$G0 c:always cg0:always,$G0" SF=100 ROUNDS=2 RUNS=3 bash $S variants > $OUT/log2-100.txt 2>&1
rm -rf /tmp/tdv-ssb100
VARIANTS="d dg0:$G0" SUITE=tpch SF=10 ROUNDS=2 RUNS=3 bash $S variants > $OUT/log2-tpch10.txt 2>&1
mkdir -p $OUT/r2 && mv $OUT/variants-* $OUT/medians-* $OUT/r2/ 2>/dev/null
cat $OUT/log2-tests.txt; grep -hE "gen --load" $OUT/log2-*.txt; cat $OUT/r2/medians-*
date -u
