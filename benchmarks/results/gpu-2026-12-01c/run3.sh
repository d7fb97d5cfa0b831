#!/usr/bin/env bash
# Run 3 of 2026-12-01c (pack B, the defaults as kept). Random queries (`tessera difftest`,
# GPU against the CPU backend): 8 seeds at their defaults (4 narrowed to byte widths),
# then 8 with compact forms forced (TESSERA_EXP_NARROW_BITS=8, TESSERA_EXP_NARROW_RUNS=2),
# each stopped after 90 s. Then SSB SF 20 kernel times (3 rounds, 5 EXPLAIN ANALYZE a
# query) in turns: d, dw (lanes adding into one group combining first,
# TESSERA_EXP_WARP_COMBINE=1), c, cw.
S=benchmarks/device/gpu-suite.sh
SEEDS=8 SEED0=10500 NARROW_SEEDS=4 DIFFTEST_SECONDS=90 bash $S difftests > $OUT/log3-difftests-default.txt 2>&1
mv $OUT/difftests.tgz $OUT/difftests-run3-default.tgz 2>/dev/null
TESSERA_EXP_NARROW_BITS=8 TESSERA_EXP_NARROW_RUNS=2 SEEDS=8 SEED0=10600 DIFFTEST_SECONDS=90 bash $S difftests > $OUT/log3-difftests-compact.txt 2>&1
mv $OUT/difftests.tgz $OUT/difftests-run3-compact.tgz 2>/dev/null
W=TESSERA_EXP_WARP_COMBINE=1
VARIANTS="d dw:$W c:always cw:always,$W" SF=20 bash $S variants > $OUT/log3-20.txt 2>&1
mkdir -p $OUT/r3 && mv $OUT/medians-* $OUT/r3/ && gzip -c $OUT/variants-ssb20.txt > $OUT/r3/variants-ssb20.txt.gz && rm -f $OUT/variants-*
cat $OUT/r3/medians-*
for f in $OUT/log3-difftests-*.txt; do echo "== $f"; grep -vE "^(WARNING|ERROR)" $f | tail -4; done
date -u
