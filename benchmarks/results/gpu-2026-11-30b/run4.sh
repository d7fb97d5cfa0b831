#!/usr/bin/env bash
# Run 4 of 2026-11-30b: where q3.1's sort chain (tessera_small_sorted_records, 11 us for
# 280 records in run 2) and its fold (tessera_fold_copies, 3.4-4 us) spend their time:
# Nsight Compute, full set, per-instruction stall samples, on the second run's launches.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log4-chain.txt
[ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
P=/tmp/tdturns20/bench/ssb-sf20
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
q="$(sed '/^--/d' benchmarks/ssb/q3.1.sql | tr '\n' ' ' | sed 's/;\s*$//')"
f=/tmp/q31x2.sql; : > $f; for i in 1 2; do echo "$q;" >> $f; done
for k in tessera_small_sorted_records tessera_fold_copies; do
  $NCU --set full --import-source no --clock-control none --kernel-name $k --launch-skip 1 --launch-count 1 -f -o /tmp/ncu-$k \
    $X --data-dir $P sql $f > /dev/null 2>&1
  echo "== $k" >> $OUT/log4-chain.txt
  $NCU -i /tmp/ncu-$k.ncu-rep --page details > /tmp/d.txt 2>&1
  grep -E "^\s+(Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Hit Rate|L2 Hit Rate|Registers Per Thread|Achieved Occupancy|Executed Instructions|Elapsed Cycles|SM Frequency|Warp Cycles Per Issued|Issue Slots Busy|Grid Size|Block Size|Dynamic Shared) " /tmp/d.txt >> $OUT/log4-chain.txt
  $NCU -i /tmp/ncu-$k.ncu-rep --page source --csv --print-source sass | gzip > $OUT/ncu-$k-sass.csv.gz
done
cat $OUT/log4-chain.txt
date -u
