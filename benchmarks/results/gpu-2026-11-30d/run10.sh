#!/usr/bin/env bash
# Run 10 of 2026-11-30d (run 9's pack): random queries (difftest), 8 seeds x 150 s,
# SEED0=8300, with the compact forms forced (TESSERA_EXP_NARROW_BITS=8,
# TESSERA_EXP_NARROW_RUNS=2: every column whose values allow it in runs), whose zone
# bitmaps now skip the runs columns' loads.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; }
TESSERA_EXP_NARROW_BITS=8 TESSERA_EXP_NARROW_RUNS=2 SEEDS=8 SEED0=8300 DIFFTEST_SECONDS=150 bash $S difftests > $OUT/log10-difftests.txt 2>&1
grep -vE "^(WARNING|ERROR)" $OUT/log10-difftests.txt | tail -10
mv $OUT/difftests.tgz $OUT/difftests-run10.tgz 2>/dev/null
date -u
