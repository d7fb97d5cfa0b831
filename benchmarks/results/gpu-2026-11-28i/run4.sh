#!/usr/bin/env bash
# Run 4 of 2026-11-28i (the pack of eac97e3: direct tables of large domains at most 8
# KiB): the GPU unit tests; the probe kernels of run 1 (five EXPLAIN ANALYZE each) with
# the new default (d) and the rule before (o: TESSERA_EXP_DIRECT_DOMAIN_BYTES=16384); then
# gpu-suite.sh ab of the two (SSB SF20 10 warm runs and TPC-H SF10 3, 2 rounds in turns;
# SSB and TPC-H SF1 answers checked both ways).
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped"; done > $OUT/log4-tests.txt 2>&1
cat $OUT/log4-tests.txt
[ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
J31="from customer, lineorder, supplier, date where lo_custkey = c_custkey and lo_suppkey = s_suppkey and lo_orderdate = d_datekey and c_region = 'ASIA' and s_region = 'ASIA' and d_year >= 1992 and d_year <= 1997"
J21="from lineorder, date, part, supplier where lo_orderdate = d_datekey and lo_partkey = p_partkey and lo_suppkey = s_suppkey and p_category = 'MFGR#12' and s_region = 'AMERICA'"
J41="from date, customer, supplier, part, lineorder where lo_custkey = c_custkey and lo_suppkey = s_suppkey and lo_partkey = p_partkey and lo_orderdate = d_datekey and c_region = 'AMERICA' and s_region = 'AMERICA' and (p_mfgr = 'MFGR#1' or p_mfgr = 'MFGR#2')"
{
for q in benchmarks/ssb/q*.sql; do echo "$(basename $q .sql)|$(sed '/^--/d' $q | tr '\n' ' ' | sed 's/;\s*$//')"; done
cat <<Q
q3.1-nations|select c_nation, s_nation, sum(lo_revenue) as revenue $J31 group by c_nation, s_nation
q3.1-cnation-year|select c_nation, d_year, sum(lo_revenue) as revenue $J31 group by c_nation, d_year
q2.1-brand|select p_brand1, sum(lo_revenue) as revenue $J21 group by p_brand1
q4.1-nations|select c_nation, s_nation, sum(lo_revenue - lo_supplycost) as profit $J41 group by c_nation, s_nation
Q
} > /tmp/variants.txt
variants() {
  while IFS='|' read -r name q; do
    f=/tmp/v.sql; : > $f
    echo "$q;" >> $f; echo "$q;" >> $f
    for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $q;" >> $f; done
    $X --format csv --data-dir /tmp/td20/bench/ssb-sf20 sql $f > /tmp/v-$1-$name.txt 2>&1
    k=$(grep -E "kernel [0-9.]+ ms" /tmp/v-$1-$name.txt | grep -E "[0-9]{8,} rows in" | grep -oE "kernel [0-9.]+" | awk '{print $2}' | sort -n | paste -sd" ")
    e=$(grep -ciE "error|panick" /tmp/v-$1-$name.txt)
    echo "$1 $name $k errors=$e"
  done < /tmp/variants.txt
}
{
variants d
TESSERA_EXP_DIRECT_DOMAIN_BYTES=16384 variants o
variants d2
TESSERA_EXP_DIRECT_DOMAIN_BYTES=16384 variants o2
} > $OUT/log4-variants.txt 2>&1
# Medians per setting and query (the middle of five).
awk '{n=NF-1; split("",a); c=0; for(i=3;i<=n;i++){c++; a[c]=$i}; m=(c>0)?a[int((c+1)/2)]:"-"; print $1, $2, m}' $OUT/log4-variants.txt > $OUT/log4-medians.txt
python3 - $OUT/log4-medians.txt <<'PY'
import sys, collections
t = collections.defaultdict(dict); qs = []
for line in open(sys.argv[1]):
    s, q, m = line.split()
    t[s][q] = m
    if q not in qs: qs.append(q)
sets = list(t)
print("query".ljust(18) + "".join(s.rjust(8) for s in sets))
for q in qs: print(q.ljust(18) + "".join(t[s].get(q, "-").rjust(8) for s in sets))
for s in sets: print(s, "SSB 13 sum", round(sum(float(t[s][q]) for q in qs if q.count(".") == 1 and "-" not in q and t[s].get(q, "-") != "-"), 3))
PY
[ -e /tmp/tdssb20 ] || ln -s /tmp/td20 /tmp/tdssb20
mkdir -p /tmp/ab4; AB=TESSERA_EXP_DIRECT_DOMAIN_BYTES=16384 ROUNDS=2 SSB_RUNS=10 OUT=/tmp/ab4 bash benchmarks/device/gpu-suite.sh ab > $OUT/log4-ab.txt 2>&1
tail -40 $OUT/log4-ab.txt
tar -C /tmp -czf $OUT/run4-json.tgz ab4
date -u
