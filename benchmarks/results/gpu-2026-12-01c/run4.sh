#!/usr/bin/env bash
# Run 4 of 2026-12-01c (pack B, the defaults as kept). SSB SF 20 (3 rounds, 5 EXPLAIN
# ANALYZE a query) and SF 100 (2 rounds, 3) kernel times in turns: d, dE0 (no probe tested
# before the filters, TESSERA_EXP_EARLY_PROBES=0: SSB q1.3's date probe after its
# discount and quantity tests, its rows then queued), c, cE0.
S=benchmarks/device/gpu-suite.sh
E0=TESSERA_EXP_EARLY_PROBES=0
VARIANTS="d dE0:$E0 c:always cE0:always,$E0" SF=20 bash $S variants > $OUT/log4-20.txt 2>&1
VARIANTS="d dE0:$E0 c:always cE0:always,$E0" SF=100 ROUNDS=2 RUNS=3 bash $S variants > $OUT/log4-100.txt 2>&1
mkdir -p $OUT/r4 && mv $OUT/medians-* $OUT/r4/ && for f in $OUT/variants-*; do gzip -c $f > $OUT/r4/$(basename $f).gz; done; rm -f $OUT/variants-*
grep -hE "gen --load" $OUT/log4-*.txt; cat $OUT/r4/medians-*
date -u
