#!/usr/bin/env bash
# Run 3 of 2026-11-30i (pack A, as run 1). Random queries (`tessera difftest`, GPU against
# the CPU backend): 8 seeds at their defaults (4 of them narrowed to byte widths), then 8
# with compact forms forced (TESSERA_EXP_NARROW_BITS=8, TESSERA_EXP_NARROW_RUNS=2), each
# stopped after 90 s.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
SEEDS=8 SEED0=9700 NARROW_SEEDS=4 DIFFTEST_SECONDS=90 bash benchmarks/device/gpu-suite.sh difftests > $OUT/log3-difftests-default.txt 2>&1
mv $OUT/difftests.tgz $OUT/difftests-run3-default.tgz 2>/dev/null
TESSERA_EXP_NARROW_BITS=8 TESSERA_EXP_NARROW_RUNS=2 SEEDS=8 SEED0=9800 DIFFTEST_SECONDS=90 bash benchmarks/device/gpu-suite.sh difftests > $OUT/log3-difftests-compact.txt 2>&1
mv $OUT/difftests.tgz $OUT/difftests-run3-compact.tgz 2>/dev/null
for f in $OUT/log3-difftests-*.txt; do echo "== $f"; grep -vE "^(WARNING|ERROR)" $f | tail -4; done
date -u
