#!/usr/bin/env bash
# Run 6 of 2026-12-01c (pack C: pack B with TESSERA_EXP_COMPACT_DRAIN_ITEMS, the entries a
# lane takes from a queue whose drain reads compact columns; 1 by default, the kernels of
# pack B). SSB SF 20 (3 rounds, 5 EXPLAIN ANALYZE a query) and SF 100 (2 rounds, 3) kernel
# times in turns: d, c, c2 (compact, two entries a lane: q1.1, q1.2, q3.2 and q4.x change).
S=benchmarks/device/gpu-suite.sh
C2=TESSERA_EXP_COMPACT_DRAIN_ITEMS=2
VARIANTS="d c:always c2:always,$C2" SF=20 bash $S variants > $OUT/log6-20.txt 2>&1
VARIANTS="d c:always c2:always,$C2" SF=100 ROUNDS=2 RUNS=3 bash $S variants > $OUT/log6-100.txt 2>&1
mkdir -p $OUT/r6 && mv $OUT/medians-* $OUT/r6/ && for f in $OUT/variants-*; do gzip -c $f > $OUT/r6/$(basename $f).gz; done; rm -f $OUT/variants-*
grep -hE "gen --load" $OUT/log6-*.txt; cat $OUT/r6/medians-*
date -u
