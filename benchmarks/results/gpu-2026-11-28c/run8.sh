#!/usr/bin/env bash
# Run 8 of 2026-11-28c, run 6's pack (builds' sinks preset at admission by default): the
# first query in a new process (SSB SF20 q1.1, q2.1, q3.1, q4.3, the kernel disk cache
# warm and emptied), and a new constant in q1.1 in both literal modes (`gpu-suite.sh cold`).
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera > /dev/null 2>&1
bash $S cold > $OUT/log8-cold.txt 2>&1
cat $OUT/log8-cold.txt
