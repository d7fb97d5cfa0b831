#!/usr/bin/env bash
# Run 5 of 2026-11-28c, run 4's pack: why SSB q3.1's probe kernel takes 0.47-0.63 ms
# depending on the process when sinks are preset (run 4: 0.581 / 0.469 / 0.634 ms in
# three processes with QUERY_FILL=1, 0.467-0.471 in three with 0). Nsight Compute
# (caches not flushed, clocks not locked) on the probe kernel of q3.1's third run in one
# process (launch 12 of tessera_pipeline: 3 builds and the probe a run), four processes
# with QUERY_FILL=1 and two with 0: duration, L1/L2 hit rates, DRAM and L2 traffic.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q3.1 > /dev/null 2>&1
f=/tmp/q31x3.sql; for i in 1 2 3; do sed '/^--/d' benchmarks/ssb/q3.1.sql >> $f; done
M=gpu__time_duration.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum,lts__t_sectors_srcunit_tex_op_red.sum,lts__t_sectors_srcunit_tex_op_atom.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
{
for e in 1 1 1 1 0 0; do
  echo "== q3.1 third run's probe, QUERY_FILL=$e"
  TESSERA_EXP_QUERY_FILL=$e $NCU --clock-control none --cache-control none --kernel-name tessera_pipeline --launch-skip 11 --launch-count 1 --metrics $M \
    $X --data-dir /tmp/td20/bench/ssb-sf20 sql $f 2>&1 | grep -E "^\s+(gpu__|l1tex|lts|dram|smsp|launch|sm__)"
done
} > $OUT/log5-ncu.txt 2>&1
cat $OUT/log5-ncu.txt
