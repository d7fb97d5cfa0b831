#!/usr/bin/env bash
# Run 4 of 2026-11-28h, the pack of the next commit (TESSERA_EXP_DIRECT_MAX_BYTES): whether
# a direct group table of several KiB (and the warp queue it brings) is what slows a probe
# pipeline whose bitmaps want L1: variants grouped into 150-1,001 direct slots with the
# defaults and with direct tables capped at 4 KiB (larger domains then use global
# atomics); then SSB SF20 both ways, 15 warm runs x 4 rounds in turns.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
[ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
J31="from customer, lineorder, supplier, date where lo_custkey = c_custkey and lo_suppkey = s_suppkey and lo_orderdate = d_datekey and c_region = 'ASIA' and s_region = 'ASIA' and d_year >= 1992 and d_year <= 1997"
J21="from lineorder, date, part, supplier where lo_orderdate = d_datekey and lo_partkey = p_partkey and lo_suppkey = s_suppkey and p_category = 'MFGR#12' and s_region = 'AMERICA'"
J41="from date, customer, supplier, part, lineorder where lo_custkey = c_custkey and lo_suppkey = s_suppkey and lo_partkey = p_partkey and lo_orderdate = d_datekey and c_region = 'AMERICA' and s_region = 'AMERICA' and (p_mfgr = 'MFGR#1' or p_mfgr = 'MFGR#2')"
cat > /tmp/variants-all.txt <<Q
q3.1-nations|select c_nation, s_nation, sum(lo_revenue) as revenue $J31 group by c_nation, s_nation
q3.1-cnation-year|select c_nation, d_year, sum(lo_revenue) as revenue $J31 group by c_nation, d_year
q3.1|select c_nation, s_nation, d_year, sum(lo_revenue) as revenue $J31 group by c_nation, s_nation, d_year
q2.1-brand|select p_brand1, sum(lo_revenue) as revenue $J21 group by p_brand1
q2.1|select sum(lo_revenue) as revenue, d_year, p_brand1 $J21 group by d_year, p_brand1
q4.1-nations|select c_nation, s_nation, sum(lo_revenue - lo_supplycost) as profit $J41 group by c_nation, s_nation
q4.1|select d_year, c_nation, sum(lo_revenue - lo_supplycost) as profit $J41 group by d_year, c_nation
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
cp /tmp/variants-all.txt /tmp/variants2.txt
{ echo "#### defaults"; variants d4; echo "#### TESSERA_EXP_DIRECT_MAX_BYTES=4096"; TESSERA_EXP_DIRECT_MAX_BYTES=4096 variants c4; } > $OUT/log4-variants.txt 2>&1
cat $OUT/log4-variants.txt
mkdir -p /tmp/r4
{
for r in $(seq 1 4); do
  order="d c"; [ $((r % 2)) = 0 ] && order="c d"
  for e in $order; do
    env=""; [ $e = c ] && env="TESSERA_EXP_DIRECT_MAX_BYTES=4096"
    echo "== SSB SF20, round $r, setting $e"
    env $env $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r4/run4-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log4-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r4 run4-ssb20 > $OUT/log4-ssb-ab.txt 2>&1
cat $OUT/log4-ssb-ab.txt
tar -C /tmp -czf $OUT/run4-json.tgz r4
date -u
