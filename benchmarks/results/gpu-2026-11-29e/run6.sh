#!/usr/bin/env bash
# Run 6 of 2026-11-29e: the pack of the final code (the L2 fetch experiment removed).
# GPU unit tests; SSB and TPC-H SF 1 answers and the slt files with the defaults; SSB SF
# 20 q3.1 with the defaults (d) and 1 and 3 items a thread (i1, i3), two warm runs then
# 5 EXPLAIN ANALYZE each; Nsight Compute on q3.1's and q4.1's probe kernels (gpu-suite's
# profile section: speed of light, memory, occupancy, scheduler and warp state).
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
( [ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1 ) &
gen=$!
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped"; done > $OUT/log6-tests.txt 2>&1
cat $OUT/log6-tests.txt
{ echo "== answers (defaults)"; OUT=/tmp/x6 bash $S answers 2>&1 | grep -vE "^(WARNING|ERROR)"
  echo "== results (defaults)"; mkdir -p /tmp/x6r; OUT=/tmp/x6r bash $S results 2>&1 | grep -hE "identical|errors|differ|FAIL"; } > $OUT/log6-answers.txt 2>&1
cat $OUT/log6-answers.txt
wait $gen
D=/tmp/tdturns20/bench/ssb-sf20
first() { awk 'NR==1{h=$0} NR>1 && $0==h{exit} {print}' "$1"; }
query=$(sed '/^--/d' benchmarks/ssb/q3.1.sql | tr '\n' ' ' | sed 's/;.*//')
for e in d i1 i3 d; do
  f=/tmp/v.sql; : > $f
  [ $e != d ] && echo "SET tessera.gpu_items_per_thread = ${e#i};" >> $f
  echo "$query;" >> $f; echo "$query;" >> $f
  for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $query;" >> $f; done
  $X --format csv --data-dir $D sql $f > /tmp/v-$e.txt 2>&1
  echo "== q3.1 $e: $(grep -oE 'GPU kernels: [0-9.]+ ms|rror.*' /tmp/v-$e.txt | tr '\n' ' ') answer $(first /tmp/v-$e.txt | md5sum | cut -c1-8) ($(first /tmp/v-$e.txt | wc -l) lines)"
done > $OUT/log6-variants.txt 2>&1
cat $OUT/log6-variants.txt
[ -e /tmp/tdp ] || ln -s $D /tmp/tdp
bash $S profile > $OUT/log6-profile.txt 2>&1
grep -E "^==|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Memory Throughput|DRAM Throughput|L1/TEX Hit|L2 Hit|Issued Warp|No Eligible|Stall|Warp Cycles Per Issued" $OUT/log6-profile.txt | head -60
date -u
