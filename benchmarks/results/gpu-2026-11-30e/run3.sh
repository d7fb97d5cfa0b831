#!/usr/bin/env bash
# Run 3 of 2026-11-30e (run 1's pack): Nsight Compute on every tessera_pipeline launch of
# SSB SF 20 q4.2 and q3.1, byte-narrowed (d) and compact (lim: '12GB'), with
# TESSERA_EXP_COMPACT_INDEX32=0; the kernel sources dumped.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
grep -q lineorder /tmp/tdturns20/bench/ssb-sf20/manifest.json 2>/dev/null || { rm -rf /tmp/tdturns20; $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1; }
P=/tmp/tdturns20/bench/ssb-sf20
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
mkdir -p $OUT/k
export TESSERA_EXP_COMPACT_INDEX32=0
for q in q4.2 q3.1; do for m in d lim; do
  echo "== ncu $q $m"
  pre=""; [ $m = lim ] && pre="SET tessera.gpu_memory_limit = '12GB'; "
  sql="$pre$(sed '/^--/d' benchmarks/ssb/$q.sql | tr '\n' ' ')"
  TESSERA_DUMP_KERNELS=$OUT/k/$q-$m $NCU --clock-control none --kernel-name tessera_pipeline \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,lts__t_bytes.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__t_sector_hit_rate.pct,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio \
    $X --data-dir $P sql <(echo "$sql") 2>&1 | grep -vE "^==PROF==|^\s*$|^│|^┌|^└|^╞|^├|^\s*-+\s"
done; done > $OUT/log3-ncu.txt 2>&1
grep -E "==|duration|registers|inst_executed|dram__bytes|lts__t_bytes|warps_active|issue_active|hit_rate|stalled|grid_size|block_size" $OUT/log3-ncu.txt | head -150
date -u
