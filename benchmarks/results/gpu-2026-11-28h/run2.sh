#!/usr/bin/env bash
# Run 2 of 2026-11-28h, run 1's pack: whether the shared hash table's size
# is what slows the kernels: run 1's variants of q3.1 and q2.1 with tables of 128 and 256
# group slots (2 and 4 KiB with q3.1's and q2.1's sums) beside the defaults.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
[ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
J31="from customer, lineorder, supplier, date where lo_custkey = c_custkey and lo_suppkey = s_suppkey and lo_orderdate = d_datekey and c_region = 'ASIA' and s_region = 'ASIA' and d_year >= 1992 and d_year <= 1997"
J21="from lineorder, date, part, supplier where lo_orderdate = d_datekey and lo_partkey = p_partkey and lo_suppkey = s_suppkey and p_category = 'MFGR#12' and s_region = 'AMERICA'"
J41="from date, customer, supplier, part, lineorder where lo_custkey = c_custkey and lo_suppkey = s_suppkey and lo_partkey = p_partkey and lo_orderdate = d_datekey and c_region = 'AMERICA' and s_region = 'AMERICA' and (p_mfgr = 'MFGR#1' or p_mfgr = 'MFGR#2')"
cat > /tmp/variants-all.txt <<Q
q3.1|select c_nation, s_nation, d_year, sum(lo_revenue) as revenue $J31 group by c_nation, s_nation, d_year
q3.1-year|select d_year, sum(lo_revenue) as revenue $J31 group by d_year
q3.1-cnation-year|select c_nation, d_year, sum(lo_revenue) as revenue $J31 group by c_nation, d_year
q3.1-nations|select c_nation, s_nation, sum(lo_revenue) as revenue $J31 group by c_nation, s_nation
q3.1-scalar|select sum(lo_revenue) as revenue $J31
q3.1-count|select count(*) $J31
q2.1|select sum(lo_revenue) as revenue, d_year, p_brand1 $J21 group by d_year, p_brand1
q2.1-year|select sum(lo_revenue) as revenue, d_year $J21 group by d_year
q2.1-scalar|select sum(lo_revenue) as revenue $J21
q4.1|select d_year, c_nation, sum(lo_revenue - lo_supplycost) as profit $J41 group by d_year, c_nation
q4.1-scalar|select sum(lo_revenue - lo_supplycost) as profit $J41
Q
variants() {
while IFS='|' read -r name q; do
  f=/tmp/v.sql; : > $f
  echo "$q;" >> $f; echo "$q;" >> $f
  for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $q;" >> $f; done
  echo "== $name"
  $X --format csv --data-dir /tmp/td20/bench/ssb-sf20 sql $f > /tmp/v-$1-$name.txt 2>&1
  grep -oE "GPU kernels: [0-9.]+ ms|rror.*" /tmp/v-$1-$name.txt | tr '\n' ' '; echo
  grep -E "kernel [0-9.]+ ms" /tmp/v-$1-$name.txt | grep -E "[0-9]{8,} rows in" | grep -oE "kernel [0-9.]+ ms" | paste -sd" "
done < /tmp/variants2.txt
}
grep -E "^q3.1\||^q2.1\|" /tmp/variants-all.txt > /tmp/variants2.txt
{ echo "#### defaults"; variants d2; for n in 128 256; do echo "#### TESSERA_EXP_SHARED_HASH=$n"; TESSERA_EXP_SHARED_HASH=$n variants h$n; done; } > $OUT/log2-variants.txt 2>&1
cat $OUT/log2-variants.txt
date -u
