#!/usr/bin/env bash
# Run 4 of 2026-12-01d (pack C: pack B with a lean kernel's queued row counted in 32 bits
# from its tile, `(int)tile + (int)threadIdx.x + i * 128`, and
# TESSERA_EXP_DRAIN_ROLLED=1 marking the drain loop `#pragma unroll 1`). SSB SF 20 (3
# rounds, 5 EXPLAIN ANALYZE a query) and SF 100 (2 rounds, 3) kernel times in turns: d,
# dR (drain loops rolled), c, cR.
S=benchmarks/device/gpu-suite.sh
R=TESSERA_EXP_DRAIN_ROLLED=1
VARIANTS="d dR:$R c:always cR:always,$R" SF=20 bash $S variants > $OUT/log4-20.txt 2>&1
mkdir -p $OUT/r4 && mv $OUT/medians-* $OUT/r4/ && gzip -c $OUT/variants-ssb20.txt > $OUT/r4/variants-ssb20.txt.gz && rm -f $OUT/variants-*
rm -rf /tmp/tdv-ssb20
VARIANTS="d dR:$R c:always cR:always,$R" SF=100 ROUNDS=2 RUNS=3 bash $S variants > $OUT/log4-100.txt 2>&1
mv $OUT/medians-* $OUT/r4/ && gzip -c $OUT/variants-ssb100.txt > $OUT/r4/variants-ssb100.txt.gz && rm -f $OUT/variants-*
grep -hE "gen --load" $OUT/log4-*.txt; cat $OUT/r4/medians-*
date -u
