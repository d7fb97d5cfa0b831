#!/usr/bin/env bash
# Run 10 of 2026-11-30: q3.1 at SF 10, where its customer bitmap is 37.5 KiB (75 at SF
# 20): does L1 keep a bitmap of that size? Nsight Compute (full set, stall samples per
# instruction) on q3.1's probe; 5 EXPLAIN ANALYZE of q3.1 in one process.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log10-sf10.txt
[ -d /tmp/tdturns10 ] || $X --data-dir /tmp/tdturns10 bench ssb --sf 10 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
P=/tmp/tdturns10/bench/ssb-sf10
q="$(sed '/^--/d' benchmarks/ssb/q3.1.sql | tr '\n' ' ' | sed 's/;\s*$//')"
f=/tmp/q31.sql; : > $f; echo "$q;" >> $f; for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $q;" >> $f; done
$X --format csv --data-dir $P sql $f 2>&1 | grep -oE "GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|rror.*" >> $OUT/log10-sf10.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
$NCU --set full --import-source no --clock-control none --kernel-name tessera_pipeline --launch-skip 3 --launch-count 1 -f -o /tmp/ncu-sf10 \
  $X --data-dir $P -c "$q" > /dev/null 2>&1
$NCU -i /tmp/ncu-sf10.ncu-rep --page details > /tmp/d.txt 2>&1
grep -E "^\s+(Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Hit Rate|L2 Hit Rate|Registers Per Thread|Achieved Occupancy|Executed Instructions) " /tmp/d.txt >> $OUT/log10-sf10.txt
$NCU -i /tmp/ncu-sf10.ncu-rep --page source --csv --print-source sass | gzip > $OUT/ncu-q31-sf10-sass.csv.gz
cat $OUT/log10-sf10.txt
date -u
