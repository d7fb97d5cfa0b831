#!/usr/bin/env bash
# Run 8 of 2026-11-29e: run 6's pack. Nsight Compute's per-instruction view of SSB SF 20
# q3.1's probe kernel (gpu-suite.sh source: warp stall samples per SASS instruction, the
# memory tables), the details page kept.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u
[ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
[ -e /tmp/tdp ] || ln -s /tmp/tdturns20/bench/ssb-sf20 /tmp/tdp
date -u
mkdir -p /tmp/o8
SOURCE="q3.1:3" OUT=/tmp/o8 bash $S source > $OUT/log8-source.txt 2>&1
ls -la /tmp/o8/ncu >> $OUT/log8-source.txt 2>&1
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
$NCU -i /tmp/o8/ncu/q3.1.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip -c > $OUT/q3.1-sass-stalls.csv.gz
tail -60 $OUT/log8-source.txt
date -u
