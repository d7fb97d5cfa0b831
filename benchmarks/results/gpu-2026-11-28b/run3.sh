#!/usr/bin/env bash
# Run 3 of 2026-11-28b: Nsight Compute on SSB SF20 q1.1's and q2.1's probe kernels with
# the defaults and with bit-packed columns (TESSERA_EXP_NARROW_BITS=32 and =8): duration,
# instructions, DRAM bytes, warp states, occupancy.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
Q=benchmarks/ssb
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"
done
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
P=/tmp/tdp
[ -d $P ] || $X --data-dir $P gen ssb --sf 20 --load 2>&1 | tail -2
for qs in q1.1:1 q2.1:3; do
  q=${qs%:*}; skip=${qs#*:}
  for e in TESSERA_EXP_NARROW_BITS=0 TESSERA_EXP_NARROW_BITS=32 TESSERA_EXP_NARROW_BITS=8; do
    echo "== ncu $q probe, $e"
    env $e $NCU --clock-control none --kernel-name tessera_pipeline --launch-skip $skip --launch-count 1 \
      --metrics gpu__time_duration.sum,smsp__inst_executed.sum,smsp__inst_executed_op_shfl.sum,smsp__inst_executed_op_global_ld.sum,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,launch__registers_per_thread,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_mio_throttle.ratio,smsp__average_warp_latency_issue_stalled_lg_throttle.ratio,smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio \
      $X --data-dir $P -c "$(sed '/^--/d' $Q/$q.sql)" 2>&1 | grep -vE "^==PROF==|^\s*$|^│|^┌|^└|^╞|^├" | tail -24
  done
done
ls -la $OUT
