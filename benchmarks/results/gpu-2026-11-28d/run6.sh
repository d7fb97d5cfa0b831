#!/usr/bin/env bash
# Run 6 of 2026-11-28d, run 3's pack (1fbdd04, the final code): the first query in a new
# process (SSB SF20, kernel disk cache warm and emptied; the build cache starts empty in
# each process); then random queries (difftest) with the default (dimension-sized builds
# kept), seeds 2022-2029 (six narrowed, two plain), 150 s each, at once.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
bash $S cold > $OUT/log6-cold.txt 2>&1
grep -E "process|rror" $OUT/log6-cold.txt
SEEDS=8 SEED0=2021 NARROW_SEEDS=6 DIFFTEST_SECONDS=150 bash $S difftests > $OUT/log6-difftests.txt 2>&1
tail -12 $OUT/log6-difftests.txt
