#!/usr/bin/env bash
# Run 3 of 2026-12-01d (pack B). TPC-H SF 10 kernel times (2 rounds, 3 EXPLAIN ANALYZE a
# query) in turns: d, dr0 (TESSERA_EXP_QUEUE_ROWS32=0). Random queries (`tessera
# difftest`, GPU against the CPU backend): 8 seeds at their defaults (4 narrowed to byte
# widths), then 8 with compact forms forced (TESSERA_EXP_NARROW_BITS=8,
# TESSERA_EXP_NARROW_RUNS=2), each stopped after 90 s.
S=benchmarks/device/gpu-suite.sh
R0=TESSERA_EXP_QUEUE_ROWS32=0
VARIANTS="d dr0:$R0" SUITE=tpch SF=10 ROUNDS=2 RUNS=3 bash $S variants > $OUT/log3-tpch10.txt 2>&1
mkdir -p $OUT/r3 && mv $OUT/medians-* $OUT/r3/ && gzip -c $OUT/variants-tpch10.txt > $OUT/r3/variants-tpch10.txt.gz && rm -f $OUT/variants-*
rm -rf /tmp/tdv-tpch10
SEEDS=8 SEED0=10700 NARROW_SEEDS=4 DIFFTEST_SECONDS=90 bash $S difftests > $OUT/log3-difftests-default.txt 2>&1
mv $OUT/difftests.tgz $OUT/difftests-run3-default.tgz 2>/dev/null
TESSERA_EXP_NARROW_BITS=8 TESSERA_EXP_NARROW_RUNS=2 SEEDS=8 SEED0=10800 DIFFTEST_SECONDS=90 bash $S difftests > $OUT/log3-difftests-compact.txt 2>&1
mv $OUT/difftests.tgz $OUT/difftests-run3-compact.tgz 2>/dev/null
cat $OUT/r3/medians-*
for f in $OUT/log3-difftests-*.txt; do echo "== $f"; grep -vE "^(WARNING|ERROR)" $f | tail -4; done
date -u
