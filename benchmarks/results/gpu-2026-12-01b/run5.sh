#!/usr/bin/env bash
# Run 5 of 2026-12-01b (pack D, as run 4, whose 60 s random-query runs finished no case:
# too short). Random queries (`tessera difftest`, GPU against the CPU backend): 8 seeds at
# their defaults (4 narrowed to byte widths), then 8 with compact forms forced
# (TESSERA_EXP_NARROW_BITS=8, TESSERA_EXP_NARROW_RUNS=2), each stopped after 90 s.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
SEEDS=8 SEED0=10300 NARROW_SEEDS=4 DIFFTEST_SECONDS=90 bash benchmarks/device/gpu-suite.sh difftests > $OUT/log5-difftests-default.txt 2>&1
mv $OUT/difftests.tgz $OUT/difftests-run5-default.tgz 2>/dev/null
TESSERA_EXP_NARROW_BITS=8 TESSERA_EXP_NARROW_RUNS=2 SEEDS=8 SEED0=10400 DIFFTEST_SECONDS=90 bash benchmarks/device/gpu-suite.sh difftests > $OUT/log5-difftests-compact.txt 2>&1
mv $OUT/difftests.tgz $OUT/difftests-run5-compact.tgz 2>/dev/null
for f in $OUT/log5-difftests-*.txt; do echo "== $f"; grep -vE "^(WARNING|ERROR)" $f | tail -4; done
date -u
