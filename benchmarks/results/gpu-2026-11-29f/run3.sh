#!/usr/bin/env bash
# Run 3 of 2026-11-29f: run 1's pack. SSB q2.1's probe at SF 20 as compiled with the
# defaults (d, narrowed payloads) and without (w), and Nsight Compute on each (speed
# of light, occupancy, launch statistics, memory workload).
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
[ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
D=/tmp/tdturns20/bench/ssb-sf20
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
query=$(sed '/^--/d' benchmarks/ssb/q2.1.sql | tr '\n' ' ' | sed 's/;.*//')
mv $D/kernels /tmp/kernels-aside-$RANDOM 2>/dev/null
for e in d w; do
  rm -rf /tmp/kd-$e; mkdir -p /tmp/kd-$e
  ( case $e in w) export TESSERA_EXP_NARROW_PAYLOADS=0;; esac
    TESSERA_DUMP_KERNELS=/tmp/kd-$e $X --format csv --data-dir $D -c "$query" > /dev/null 2>&1
    grep -l "out_seen" /tmp/kd-$e/*.cu | head -1 | xargs -I{} cp {} $OUT/q2.1-sf20-probe-$e.cu
    echo "== ncu q2.1 $e"
    $NCU --clock-control none --kernel-name tessera_pipeline --launch-skip 3 --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section WarpStateStats \
      $X --data-dir $D -c "$query" 2>&1 | grep -vE "^==PROF==|^\s*$" | grep -E "Duration|Registers|Occupancy|Throughput|Hit Rate|Block Limit|Stall|Mem Busy|Max Bandwidth|Executed Ipc|Warp Cycles" )
done > $OUT/log3-ncu.txt 2>&1
cat $OUT/log3-ncu.txt
date -u
