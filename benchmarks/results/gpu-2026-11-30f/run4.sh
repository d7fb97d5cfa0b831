#!/usr/bin/env bash
# Run 4 of 2026-11-30f (pack B): Nsight Compute on every tessera_pipeline launch of SSB
# SF 20 q1.2 and q2.2 over compact columns ('12GB'), rows by number (ir0) and by tile and
# item (ir1; ir5: the row's own address in 32 bits); the kernel sources dumped.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
grep -q lineorder /tmp/tdturns20/bench/ssb-sf20/manifest.json 2>/dev/null || { rm -rf /tmp/tdturns20; $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1; }
P=/tmp/tdturns20/bench/ssb-sf20
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
mkdir -p $OUT/k
for q in q1.2 q2.2; do for f in 0 1 5; do
  echo "== ncu $q ir$f"
  sql="SET tessera.gpu_memory_limit = '12GB'; $(sed '/^--/d' benchmarks/ssb/$q.sql | tr '\n' ' ')"
  TESSERA_EXP_ITEM_ROWS=$f TESSERA_DUMP_KERNELS=$OUT/k/$q-ir$f $NCU --clock-control none --kernel-name tessera_pipeline \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,lts__t_bytes.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__t_sector_hit_rate.pct,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum \
    $X --data-dir $P sql <(echo "$sql") 2>&1 | grep -vE "^==PROF==|^\s*$|^│|^┌|^└|^╞|^├|^\s*-+\s"
done; done > $OUT/log4-ncu.txt 2>&1
grep -E "==|duration|registers|inst_executed|requests|sectors_pipe|grid_size|block_size" $OUT/log4-ncu.txt | head -150
ls -R $OUT/k | head -40
date -u
