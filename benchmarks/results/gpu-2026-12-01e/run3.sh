#!/usr/bin/env bash
# Run 3 of 2026-12-01e (pack B). SSB SF 100 kernel times (2 rounds, 3 EXPLAIN ANALYZE a
# query) in turns: d, dB1, c, cB1; random queries (`tessera difftest`, GPU against the
# CPU backend): 8 seeds at the defaults (4 narrowed to byte widths), then 8 with compact
# forms forced (TESSERA_EXP_NARROW_BITS=8, TESSERA_EXP_NARROW_RUNS=2), 90 s each.
S=benchmarks/device/gpu-suite.sh
B1=TESSERA_EXP_BITMAP_COST=1
VARIANTS="d dB1:$B1 c:always cB1:always,$B1" SF=100 ROUNDS=2 RUNS=3 bash $S variants > $OUT/log3-100.txt 2>&1
mkdir -p $OUT/r3 && mv $OUT/medians-* $OUT/r3/ && gzip -c $OUT/variants-ssb100.txt > $OUT/r3/variants-ssb100.txt.gz && rm -f $OUT/variants-*
rm -rf /tmp/tdv-ssb100
SEEDS=8 SEED0=10900 NARROW_SEEDS=4 DIFFTEST_SECONDS=90 bash $S difftests > $OUT/log3-difftests-default.txt 2>&1
mv $OUT/difftests.tgz $OUT/difftests-run3-default.tgz 2>/dev/null
TESSERA_EXP_NARROW_BITS=8 TESSERA_EXP_NARROW_RUNS=2 SEEDS=8 SEED0=11000 DIFFTEST_SECONDS=90 bash $S difftests > $OUT/log3-difftests-compact.txt 2>&1
mv $OUT/difftests.tgz $OUT/difftests-run3-compact.tgz 2>/dev/null
grep -hE "gen --load" $OUT/log3-*.txt; cat $OUT/r3/medians-*
for f in $OUT/log3-difftests-*.txt; do echo "== $f"; grep -vE "^(WARNING|ERROR)" $f | tail -4; done
date -u
