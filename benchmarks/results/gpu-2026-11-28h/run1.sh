#!/usr/bin/env bash
# Run 1 of 2026-11-28h: where SSB q3.1's probe spends its time beyond its byte model.
# Variants of q3.1 over the same joins and filters, each EXPLAIN ANALYZEd 5 times after
# two warm runs: its own 3-key grouping (a 4,375-slot domain: global atomics), grouped by
# d_year alone and by c_nation, d_year (shared tables), scalar sums, and only counted;
# the same for q2.1 (8,008-slot domain) and q4.1 (shared) beside them; all of it again
# with a block's shared hash table of 1,024 group slots for the large domains
# (TESSERA_EXP_SHARED_HASH=1024, h). Then SSB SF20 default (d) against h, 15 warm runs x 8
# rounds in turns. `run1.sh checks` (a call of its own): the GPU unit tests, SSB and TPC-H
# SF1 answers and gpu-suite.sh answers' slt files with the defaults and with h.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
if [ "${1:-}" = checks ]; then
{
echo "== GPU unit tests"; OUT=/tmp/x1 bash benchmarks/device/gpu-suite.sh tests 2>&1 | grep -E "test result|FAILED|panicked"
echo "== SF1 answers, defaults"; OUT=/tmp/x1a bash benchmarks/device/gpu-suite.sh answers 2>&1 | grep -E "✗|rror|total|identical|differ"
echo "== SF1 answers, TESSERA_EXP_SHARED_HASH=1024"; TESSERA_EXP_SHARED_HASH=1024 OUT=/tmp/x1b bash benchmarks/device/gpu-suite.sh answers 2>&1 | grep -E "✗|rror|total|identical|differ"
} > $OUT/log1-checks.txt 2>&1
cat $OUT/log1-checks.txt
exit 0
fi
[ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
J31="from customer, lineorder, supplier, date where lo_custkey = c_custkey and lo_suppkey = s_suppkey and lo_orderdate = d_datekey and c_region = 'ASIA' and s_region = 'ASIA' and d_year >= 1992 and d_year <= 1997"
J21="from lineorder, date, part, supplier where lo_orderdate = d_datekey and lo_partkey = p_partkey and lo_suppkey = s_suppkey and p_category = 'MFGR#12' and s_region = 'AMERICA'"
J41="from date, customer, supplier, part, lineorder where lo_custkey = c_custkey and lo_suppkey = s_suppkey and lo_partkey = p_partkey and lo_orderdate = d_datekey and c_region = 'AMERICA' and s_region = 'AMERICA' and (p_mfgr = 'MFGR#1' or p_mfgr = 'MFGR#2')"
cat > /tmp/variants.txt <<Q
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
done < /tmp/variants.txt
}
{ echo "#### defaults"; variants d; echo "#### TESSERA_EXP_SHARED_HASH=1024"; TESSERA_EXP_SHARED_HASH=1024 variants h; } > $OUT/log1-variants.txt 2>&1
cat $OUT/log1-variants.txt
for n in q3.1 q3.1-year q2.1 q4.1; do for e in d h; do echo "######## $n $e"; tail -12 /tmp/v-$e-$n.txt; done; done > $OUT/log1-explain.txt 2>&1
mkdir -p /tmp/r1
{
for r in $(seq 1 8); do
  order="d h"; [ $((r % 2)) = 0 ] && order="h d"
  for e in $order; do
    env=""; [ $e = h ] && env="TESSERA_EXP_SHARED_HASH=1024"
    echo "== SSB SF20, round $r, setting $e"
    env $env $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r1/run1-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log1-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r1 run1-ssb20 > $OUT/log1-ssb-ab.txt 2>&1
cat $OUT/log1-ssb-ab.txt
tar -C /tmp -czf $OUT/run1-json.tgz r1
date -u
