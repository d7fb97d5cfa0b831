#!/usr/bin/env bash
# Run 2 of 2026-11-29g: run 1's pack. SSB SF 100: the GPU column cache after all 13
# queries in one process and q4.3's kernels, byte-narrowed (the default) and bit-packed
# (TESSERA_EXP_NARROW_BITS=32 and =8); SSB SF 20 EXPLAIN ANALYZE of every query with the
# defaults, =8 and the defaults again; Nsight Compute on q1.1's, q2.2's and q3.1's probe
# kernels under both; the sources (and SASS, where cuobjdump is there) of q2.2's and
# q3.1's kernels under both.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
{
[ -d /tmp/td100/bench/ssb-sf100 ] || /usr/bin/time -f "gen+load %e s" $X --data-dir /tmp/td100/bench/ssb-sf100 gen ssb --sf 100 --load 2>&1 | tail -2
f=/tmp/ssb100.sql; : > $f
for q in benchmarks/ssb/q*.sql; do sed '/^--/d' $q >> $f; done
echo "EXPLAIN ANALYZE $(sed '/^--/d' benchmarks/ssb/q4.3.sql)" >> $f
for e in TESSERA_EXP_NARROW=0 TESSERA_EXP_NARROW=1 TESSERA_EXP_NARROW_BITS=32 TESSERA_EXP_NARROW_BITS=8; do
  env $e $X --format csv --data-dir /tmp/td100/bench/ssb-sf100 sql $f 2>&1 | grep -oE "GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB in [0-9]+ columns|rror.*" | paste -sd' ' | sed "s/^/$e: /"
done
} > $OUT/log2-ssb100.txt 2>&1
cat $OUT/log2-ssb100.txt
rm -rf /tmp/td100
[ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
STORE=/tmp/tdturns20/bench/ssb-sf20 EXPS="- TESSERA_EXP_NARROW_BITS=8 -" bash $S exp > $OUT/log2-exp.txt 2>&1
grep -E "==|GPU kernels" $OUT/log2-exp.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
P=/tmp/tdturns20/bench/ssb-sf20
for qs in q1.1:1 q2.2:3 q3.1:3; do
  q=${qs%:*}; skip=${qs#*:}
  for e in TESSERA_EXP_NARROW_BITS=0 TESSERA_EXP_NARROW_BITS=8; do
    echo "== ncu $q probe, $e"
    env $e $NCU --clock-control none --kernel-name tessera_pipeline --launch-skip $skip --launch-count 1 \
      --metrics gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,smsp__cycles_active.avg \
      $X --data-dir $P -c "$(sed '/^--/d' benchmarks/ssb/$q.sql)" 2>&1 | grep -vE "^==PROF==|^\s*$|^│|^┌|^└|^╞|^├|^\s*-+\s" | tail -8
  done
done > $OUT/log2-ncu.txt 2>&1
cat $OUT/log2-ncu.txt
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
for e in 0 8; do
  for q in q2.2 q3.1; do
    rm -rf $P/kernels
    mkdir -p /tmp/kdump/$q-bits$e
    TESSERA_EXP_NARROW_BITS=$e TESSERA_DUMP_KERNELS=/tmp/kdump/$q-bits$e $X --data-dir $P -c "$(sed '/^--/d' benchmarks/ssb/$q.sql)" > /dev/null 2>&1
    [ -n "$CUOBJ" ] && for c in $(find $P/kernels -type f); do $CUOBJ -sass $c > /tmp/kdump/$q-bits$e/$(basename $c).sass 2>&1; done
  done
done
tar -C /tmp -czf $OUT/kernels-q2.2-q3.1.tgz kdump
date -u
