#!/usr/bin/env bash
# Run 14 of 2026-11-30d (run 13's pack): random queries (difftest), 8 seeds x 110 s,
# SEED0=8500, compact forms forced (TESSERA_EXP_NARROW_BITS=8, TESSERA_EXP_NARROW_RUNS=2).
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
TESSERA_EXP_NARROW_BITS=8 TESSERA_EXP_NARROW_RUNS=2 SEEDS=8 SEED0=8500 DIFFTEST_SECONDS=110 bash $S difftests > $OUT/log14-difftests.txt 2>&1
grep -vE "^(WARNING|ERROR)" $OUT/log14-difftests.txt | tail -6
mv $OUT/difftests.tgz $OUT/difftests-run14.tgz 2>/dev/null
