#!/usr/bin/env bash
# Run 2 of 2026-11-30c: where the new sort chain (8.3 us in run 1) and fold (3.2 us) of
# SSB q3.1 at SF 20 spend their time: Nsight Compute, full set, per-instruction stall
# samples, on the second run's launches; and q3.1's whole timeline of launches (nsys if
# present) for the gaps between them.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log2-chain.txt
[ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
P=/tmp/tdturns20/bench/ssb-sf20
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
q="$(sed '/^--/d' benchmarks/ssb/q3.1.sql | tr '\n' ' ' | sed 's/;\s*$//')"
f=/tmp/q31x2.sql; : > $f; for i in 1 2; do echo "$q;" >> $f; done
for k in tessera_small_sorted_records tessera_fold_copies; do
  $NCU --set full --import-source no --clock-control none --kernel-name $k --launch-skip 1 --launch-count 1 -f -o /tmp/ncu-$k \
    $X --data-dir $P sql $f > /dev/null 2>&1
  echo "== $k" >> $OUT/log2-chain.txt
  $NCU -i /tmp/ncu-$k.ncu-rep --page details > /tmp/d.txt 2>&1
  grep -E "^\s+(Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Hit Rate|L2 Hit Rate|Registers Per Thread|Achieved Occupancy|Executed Instructions|Elapsed Cycles|SM Frequency|Warp Cycles Per Issued|Issue Slots Busy|Grid Size|Block Size|Dynamic Shared) " /tmp/d.txt >> $OUT/log2-chain.txt
  $NCU -i /tmp/ncu-$k.ncu-rep --page source --csv --print-source sass | gzip > $OUT/ncu-$k-sass.csv.gz
done
cat $OUT/log2-chain.txt
NSYS=$(command -v nsys || ls /opt/nvidia/nsight-systems/*/bin/nsys /usr/local/cuda/bin/nsys 2>/dev/null | head -1)
echo "nsys: $NSYS" >> $OUT/log2-chain.txt
if [ -n "$NSYS" ]; then
  f=/tmp/q31x6.sql; : > $f; for i in 1 2 3 4 5 6; do echo "$q;" >> $f; done
  $NSYS profile -t cuda -o /tmp/q31 -f true $X --data-dir $P sql $f > /dev/null 2>&1
  $NSYS stats -r cuda_gpu_trace -f csv -o /tmp/q31trace /tmp/q31.nsys-rep > /dev/null 2>&1
  ls /tmp/q31trace* >> $OUT/log2-chain.txt 2>&1
  cp /tmp/q31trace*.csv $OUT/ 2>/dev/null
  tail -40 /tmp/q31trace*.csv | cut -c1-220 >> $OUT/log2-chain.txt
fi
tail -45 $OUT/log2-chain.txt
date -u
