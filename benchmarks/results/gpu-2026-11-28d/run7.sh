#!/usr/bin/env bash
# Run 7 of 2026-11-28d, run 3's pack: the first query in a new process again, as
# 2026-11-28c's run 8 measured it: every SSB SF20 query run once first (run 6 ran only
# q1.1 first, so q2.1's, q3.1's and q4.3's dimension tables came from disk, not the page
# cache, in their first process), then `gpu-suite.sh cold`.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera > /dev/null 2>&1
bash $S cold > $OUT/log7-cold.txt 2>&1
grep -E "process|rror" $OUT/log7-cold.txt | sed -E 's/; tessera_analyze.*//'
