#!/usr/bin/env bash
# Run 1 of 2026-12-01d (pack of 91866e4's kernels): where the compact kernels lose to
# the byte-narrowed ones at SSB SF 100. The SF 100 kernels' sources as generated, d
# (defaults) and c (every table compact), then Nsight Compute on every generated kernel
# of q1.3, q2.1, q3.2 and q4.2, d and c (c forced by TESSERA_EXP_NARROW_BITS=8
# TESSERA_EXP_NARROW_RUNS=2, as the difftests force it).
S=benchmarks/device/gpu-suite.sh
VARIANTS="d:TESSERA_DUMP_KERNELS=/tmp/k100d c:always,TESSERA_DUMP_KERNELS=/tmp/k100c" SF=100 ROUNDS=1 RUNS=1 bash $S variants > $OUT/log1-dump.txt 2>&1
tar -C /tmp -czf $OUT/kernels100.tgz k100d k100c
ls /tmp/k100d | wc -l; ls /tmp/k100c | wc -l
X=/tmp/tessera-gpu/bin/tessera
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"
M=gpu__time_duration.sum,smsp__inst_executed.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
for q in q1.3 q2.1 q3.2 q4.2; do
  for v in d c; do
    echo "== ncu $q $v"
    ( [ $v = c ] && export TESSERA_EXP_NARROW_BITS=8 TESSERA_EXP_NARROW_RUNS=2
      $NCU --clock-control none --kernel-name tessera_pipeline --launch-count 8 --metrics $M --section WarpStateStats \
        $X --data-dir /tmp/tdv-ssb100 -c "$(sed '/^--/d' benchmarks/ssb/$q.sql)" 2>&1 | grep -vE "^==PROF==|^\s*$|^\s+-+\s" | grep -vE "^\s+(OPT|INF)|^\s{10,}[a-z]" )
  done
done > $OUT/log1-ncu.txt 2>&1
grep -E "== ncu|Block Size|tessera_pipeline|gpu__time|inst_executed|warps_active|issue_active|registers|hit_rate" $OUT/log1-ncu.txt | head -150
date -u
