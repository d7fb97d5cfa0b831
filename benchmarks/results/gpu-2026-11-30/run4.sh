#!/usr/bin/env bash
# Run 4 of 2026-11-30: does L1 keep q3.1's customer bitmap? Nsight Compute (full set, stall
# samples per instruction) on q3.1's probe with the defaults, with the scanned columns
# not allocated in L1 (TESSERA_EXP_COLUMN_LOADS=2) or evicted first (=3), and with fewer
# resident blocks (TESSERA_EXP_BLOCKS_PER_SM=8, 6: fewer columns streamed through an SM's
# L1 at once). Also, for the next step on bit-packed columns: q4.2's probe, the slowest
# under TESSERA_EXP_NARROW_BITS=8 (0.598 against 0.462 ms, 2026-11-29h run 4), both ways.
# The pack of run 3 (its one switch off by default: the kernels of 78105a8).
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log4-ncu.txt
[ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
P=/tmp/tdturns20/bench/ssb-sf20
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
prof() {  # $1 name, $2 query, $3 kernels before the probe, then env assignments
  local name=$1 q=$2 skip=$3; shift 3
  env "$@" $NCU --set full --import-source no --clock-control none --kernel-name tessera_pipeline --launch-skip $skip --launch-count 1 -f -o /tmp/ncu-$name \
    $X --data-dir $P -c "$(sed '/^--/d' benchmarks/ssb/$q.sql)" > /tmp/ncu-$name.txt 2>&1
  $NCU -i /tmp/ncu-$name.ncu-rep --page details > /tmp/ncu-$name-details.txt 2>&1
  $NCU -i /tmp/ncu-$name.ncu-rep --page source --csv --print-source sass | gzip > $OUT/ncu-$name-sass.csv.gz
  echo "== $name: $q $*"
  grep -E "^\s+(Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Hit Rate|L2 Hit Rate|Registers Per Thread|Achieved Occupancy|Warp Cycles Per Issued Instruction|Executed Instructions|Grid Size) " /tmp/ncu-$name-details.txt
}
{ prof q31-d q3.1 3 X=0
  prof q31-c2 q3.1 3 TESSERA_EXP_COLUMN_LOADS=2
  prof q31-c3 q3.1 3 TESSERA_EXP_COLUMN_LOADS=3
  prof q31-g8 q3.1 3 TESSERA_EXP_BLOCKS_PER_SM=8
  prof q31-g6 q3.1 3 TESSERA_EXP_BLOCKS_PER_SM=6
  prof q42-d q4.2 4 X=0
  prof q42-b8 q4.2 4 TESSERA_EXP_NARROW_BITS=8
} >> $OUT/log4-ncu.txt 2>&1
cat $OUT/log4-ncu.txt
mkdir -p $OUT/kernels
for e in 0 8; do rm -rf $P/kernels; TESSERA_DUMP_KERNELS=/tmp/k$e TESSERA_EXP_NARROW_BITS=$e $X --data-dir $P -c "$(sed '/^--/d' benchmarks/ssb/q4.2.sql)" > /dev/null 2>&1; ls /tmp/k$e | head; cp -r /tmp/k$e $OUT/kernels/bits$e; done
date -u
