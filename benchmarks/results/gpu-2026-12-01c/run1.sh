#!/usr/bin/env bash
# Run 1 of 2026-12-01c (pack A: grouped queues as an experiment, TESSERA_EXP_GROUPED_QUEUE=1;
# the filters' estimate only where a queue follows). GPU unit tests; SSB and TPC-H SF 1
# answers of the CPU backend, d and c, with the defaults and with grouped queues; SSB SF 20
# (3 rounds, 5 EXPLAIN ANALYZE a query) and SF 100 (2 rounds, 3) kernel times in turns:
# d, dg (grouped queues), dg1 (and one entry a lane, SF 20 only), c (every table compact),
# cg (compact, grouped queues).
S=benchmarks/device/gpu-suite.sh
{ bash $S tests; echo "== answers, defaults"; bash $S answers1; echo "== answers, TESSERA_EXP_GROUPED_QUEUE=1"; TESSERA_EXP_GROUPED_QUEUE=1 bash $S answers1; } 2>&1 | grep -vE "^(WARNING|ERROR).*(whl|pip|site)" > $OUT/log1-tests.txt
G=TESSERA_EXP_GROUPED_QUEUE=1
VARIANTS="d dg:$G dg1:$G,TESSERA_EXP_DRAIN_ITEMS=1 c:always cg:always,$G" SF=20 bash $S variants > $OUT/log1-20.txt 2>&1
VARIANTS="d dg:$G c:always cg:always,$G" SF=100 ROUNDS=2 RUNS=3 bash $S variants > $OUT/log1-100.txt 2>&1
mkdir -p $OUT/r1 && mv $OUT/variants-* $OUT/medians-* $OUT/r1/ 2>/dev/null
cat $OUT/log1-tests.txt; grep -E "gen --load" $OUT/log1-20.txt $OUT/log1-100.txt; cat $OUT/r1/medians-*
date -u
