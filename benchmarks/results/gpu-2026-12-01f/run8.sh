#!/usr/bin/env bash
# Run 8 of 2026-12-01f (the pack of run 7, 3b71a9b's code). Random queries (`tessera
# difftest`, GPU against the CPU backend), 95 s a seed: offsets 11501-11508 at the
# defaults (4 narrowed to byte widths) and 11601-11608 with compact forms forced; the
# narrowed columns' distances and bit-packing now take run 5's and run 7's paths.
S=benchmarks/device/gpu-suite.sh
SEEDS=8 SEED0=11500 NARROW_SEEDS=4 DIFFTEST_SECONDS=95 bash $S difftests > $OUT/log8-difftests-default.txt 2>&1; mv $OUT/difftests.tgz $OUT/difftests-run8-default.tgz
TESSERA_EXP_NARROW_BITS=8 TESSERA_EXP_NARROW_RUNS=2 SEEDS=8 SEED0=11600 DIFFTEST_SECONDS=95 bash $S difftests > $OUT/log8-difftests-compact.txt 2>&1; mv $OUT/difftests.tgz $OUT/difftests-run8-compact.tgz
for f in $OUT/log8-*.txt; do echo "== $f"; grep -vE "^(WARNING|ERROR)" $f | tail -3; done
