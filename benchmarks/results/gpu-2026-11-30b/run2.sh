#!/usr/bin/env bash
# Run 2 of 2026-11-30b: where q3.1's kernel time beside its probe goes, and which unit
# bounds the probe. Nsight Compute over every kernel of q3.1 run three times in one
# process (duration each: the probe, the fold of its group copies, the sort chain); the
# probe's Speed-of-Light breakdown (each DRAM/L2/L1 sub-metric against its peak) and
# its L1/L2 request and hit counts.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log2-ncu.txt
[ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
P=/tmp/tdturns20/bench/ssb-sf20
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
q="$(sed '/^--/d' benchmarks/ssb/q3.1.sql | tr '\n' ' ' | sed 's/;\s*$//')"
f=/tmp/q31x3.sql; : > $f; for i in 1 2 3; do echo "$q;" >> $f; done
echo "== every kernel of q3.1 x3 in one process: name, grid, duration" >> $OUT/log2-ncu.txt
$NCU --clock-control none --metrics gpu__time_duration.sum --csv $X --data-dir $P sql $f 2>/dev/null \
  | python3 -c "
import csv, sys
rows = [r for r in csv.reader(sys.stdin) if len(r) > 10]
h = rows[0]; ki = h.index('Kernel Name'); gi = h.index('Grid Size'); vi = h.index('Metric Value'); ui = h.index('Metric Unit')
for r in rows[1:]: print(r[ki][:40], r[gi], r[vi], r[ui])
" >> $OUT/log2-ncu.txt 2>&1
echo "== q3.1 probe: Speed of Light breakdown" >> $OUT/log2-ncu.txt
$NCU --clock-control none --kernel-name tessera_pipeline --launch-skip 3 --launch-count 1 --section SpeedOfLight --print-details all \
  --metrics lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts.sum,lts__t_sectors_srcunit_tex_op_red.sum,dram__bytes_read.sum \
  $X --data-dir $P -c "$q" 2>&1 | grep -vE "^==PROF==|^\s*$|^│|^┌|^└|^╞|^├" | tail -60 >> $OUT/log2-ncu.txt
cat $OUT/log2-ncu.txt
date -u
