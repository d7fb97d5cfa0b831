#!/usr/bin/env bash
# Run 12 of 2026-11-30d (run 11's pack): why SSB q1.x are slowest over compact columns.
# Nsight Compute on the probe kernels of q1.1 and q1.3, SF 20, under the default limit (d)
# and under '12GB' (lim: lineorder compact); EXPLAIN ANALYZE of q1.3 both ways.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; }
grep -q lineorder /tmp/tdturns20/bench/ssb-sf20/manifest.json 2>/dev/null || { rm -rf /tmp/tdturns20; $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1; }
P=/tmp/tdturns20/bench/ssb-sf20
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
mkdir -p $OUT/k
for q in q1.1 q1.3; do for m in d lim; do
  echo "== ncu $q $m"
  pre=""; [ $m = lim ] && pre="SET tessera.gpu_memory_limit = '12GB'; "
  sql="$pre$(sed '/^--/d' benchmarks/ssb/$q.sql | tr '\n' ' ')"
  TESSERA_DUMP_KERNELS=$OUT/k/$q-$m $NCU --clock-control none --kernel-name tessera_pipeline --launch-skip 1 --launch-count 1 \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size,smsp__issue_active.avg.pct_of_peak_sustained_active \
    $X --data-dir $P sql <(echo "$sql") 2>&1 | grep -vE "^==PROF==|^\s*$|^│|^┌|^└|^╞|^├|^\s*-+\s" | tail -9
done; done > $OUT/log12-ncu.txt 2>&1
cat $OUT/log12-ncu.txt
ls $OUT/k/*
date -u
