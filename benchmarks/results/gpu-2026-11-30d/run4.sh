#!/usr/bin/env bash
# Run 4 of 2026-11-30d (run after runs 5-7, from run 6's pack): random queries (difftest),
# 8 seeds x 200 s, SEED0=8100, with TESSERA_EXP_KERNEL_GRAPH=0 (the committed default; the
# pack had the graphs on).
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; }
TESSERA_EXP_KERNEL_GRAPH=0 SEEDS=8 SEED0=8100 DIFFTEST_SECONDS=200 bash $S difftests > $OUT/log4-difftests.txt 2>&1
grep -vE "^(WARNING|ERROR)" $OUT/log4-difftests.txt | tail -10
mv $OUT/difftests.tgz $OUT/difftests-run4.tgz 2>/dev/null
date -u
