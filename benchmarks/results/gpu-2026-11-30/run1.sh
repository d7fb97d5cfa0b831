#!/usr/bin/env bash
# Run 1 of 2026-11-30: where q3.1's probe spends its time beyond its model (issue #17).
# The pack of 78105a8's kernels (run 5 of 2026-11-29h). SSB SF 20: q3.1 and variants of its
# joins and filters (one group, a count, each dimension's payload alone), 7 EXPLAIN ANALYZE
# each in one process; Nsight Compute's full set on q3.1's and q3.2's probes, with the
# per-instruction stall samples (SASS) of q3.1's.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log1-variants.txt
[ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
P=/tmp/tdturns20/bench/ssb-sf20
J="from customer, lineorder, supplier, date where lo_custkey = c_custkey and lo_suppkey = s_suppkey and lo_orderdate = d_datekey and c_region = 'ASIA' and s_region = 'ASIA' and d_year >= 1992 and d_year <= 1997"
declare -A V=(
  [q31]="select c_nation, s_nation, d_year, sum(lo_revenue) as revenue $J group by c_nation, s_nation, d_year order by d_year asc, revenue desc"
  [sum]="select sum(lo_revenue) $J"
  [count]="select count(*) $J"
  [cnation]="select c_nation, count(*) $J group by c_nation order by c_nation"
  [snation]="select s_nation, count(*) $J group by s_nation order by s_nation"
  [year]="select d_year, count(*) $J group by d_year order by d_year"
  [three]="select c_nation, s_nation, d_year, count(*) $J group by c_nation, s_nation, d_year order by d_year, c_nation, s_nation"
)
for v in q31 sum count cnation snation year three; do
  f=/tmp/v-$v.sql; : > $f
  for i in 1 2 3 4 5 6 7; do echo "EXPLAIN ANALYZE ${V[$v]};" >> $f; done
  echo "== $v: ${V[$v]}"
  $X --format csv --data-dir $P sql $f 2>&1 | grep -oE "pipeline [0-9]+ \[GPU\]: 1[0-9]{8} rows in, [0-9]+ rows out, kernel [0-9.]+ ms|GPU kernels: [0-9.]+ ms, bandwidth model [0-9.]+ ms|rror.*" | paste -sd' ' | sed 's/GPU kernels/\nGPU kernels/g'
done >> $OUT/log1-variants.txt 2>&1
cat $OUT/log1-variants.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for qs in q3.1:3 q3.2:3; do
  q=${qs%:*}; skip=${qs#*:}
  $NCU --set full --import-source no --clock-control none --kernel-name tessera_pipeline --launch-skip $skip --launch-count 1 -f -o /tmp/ncu-$q \
    $X --data-dir $P -c "$(sed '/^--/d' benchmarks/ssb/$q.sql)" > /tmp/ncu-$q.txt 2>&1
  tail -3 /tmp/ncu-$q.txt
  $NCU -i /tmp/ncu-$q.ncu-rep --page details > $OUT/log1-ncu-$q-details.txt 2>&1
  $NCU -i /tmp/ncu-$q.ncu-rep --page source --csv --print-source sass > $OUT/ncu-$q-sass.csv 2>&1
  wc -l $OUT/ncu-$q-sass.csv
done
cp /tmp/ncu-q3.1.ncu-rep $OUT/ 2>/dev/null
grep -E "Warp Cycles Per Issued|Issue Slots Busy|Achieved Occupancy|L1/TEX Hit|L2 Hit|Memory Throughput|DRAM Throughput|Duration|Stall|No Eligible" $OUT/log1-ncu-q3.1-details.txt | head -40
date -u
