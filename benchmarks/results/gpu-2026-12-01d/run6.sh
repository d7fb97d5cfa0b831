#!/usr/bin/env bash
# Run 6 of 2026-12-01d (pack D): items a thread for the lean kernels (SSB q1.x) over
# compact columns. ITEMS_PER_THREAD_LEAN (8) was measured over byte-wide columns
# (2026-11-28); here c against c4 (TESSERA_EXP_LEAN_ITEMS=4) and c16 (16) at SF 20 (3
# rounds, 5 EXPLAIN ANALYZE a query) and c against c4 at SF 100 (2 rounds, 3).
S=benchmarks/device/gpu-suite.sh
L=TESSERA_EXP_LEAN_ITEMS
VARIANTS="c:always c4:always,$L=4 c16:always,$L=16" SF=20 bash $S variants > $OUT/log6-20.txt 2>&1
mkdir -p $OUT/r6 && mv $OUT/medians-* $OUT/r6/ && rm -f $OUT/variants-*
rm -rf /tmp/tdv-ssb20
VARIANTS="c:always c4:always,$L=4" SF=100 ROUNDS=2 RUNS=3 bash $S variants > $OUT/log6-100.txt 2>&1
mv $OUT/medians-* $OUT/r6/ && rm -f $OUT/variants-*
grep -hE "gen --load" $OUT/log6-*.txt; cat $OUT/r6/medians-* | tr '|' '\n' | grep -E "^[a-z0-9]+:|q1\."
date -u
