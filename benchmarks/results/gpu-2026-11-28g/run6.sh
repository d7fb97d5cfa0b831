#!/usr/bin/env bash
# Run 6 of 2026-11-28g, run 5's pack (the final code): random queries, seeds 2078-2085
# (two with packed columns, four narrowed, two plain), 200 s each.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
SEEDS=8 SEED0=2077 PACKED_SEEDS=2 NARROW_SEEDS=4 DIFFTEST_SECONDS=200 bash $S difftests > $OUT/log6-difftests.txt 2>&1
tail -4 $OUT/log6-difftests.txt
mv $OUT/difftests.tgz $OUT/run6-difftests.tgz
date -u
