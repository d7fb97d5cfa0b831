#!/usr/bin/env bash
# Run 3 of 2026-11-28i (the pack of the WARP_COMBINE=2 commit): the GPU unit tests; the
# probe kernels of run 1 (five EXPLAIN ANALYZE each) with the defaults (d), WARP_COMBINE=1
# (w1: a shuffle a peer) and WARP_COMBINE=2 (w2: sums below 2^42 by two warp reductions);
# then with WARP_COMBINE=2: SSB and TPC-H SF1 answers checked and four random-query runs
# of 100 s.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped"; done > $OUT/log3-tests.txt 2>&1
cat $OUT/log3-tests.txt
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
TESSERA_EXP_WARP_COMBINE=1 variants w1
TESSERA_EXP_WARP_COMBINE=2 variants w2
variants d2
TESSERA_EXP_WARP_COMBINE=2 variants w2b
} > $OUT/log3-variants.txt 2>&1
# Medians per setting and query (the middle of five).
awk '{n=NF-1; split("",a); c=0; for(i=3;i<=n;i++){c++; a[c]=$i}; m=(c>0)?a[int((c+1)/2)]:"-"; print $1, $2, m}' $OUT/log3-variants.txt > $OUT/log3-medians.txt
python3 - $OUT/log3-medians.txt <<'PY'
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
export TESSERA_EXP_WARP_COMBINE=2
{
for suite in ssb tpch; do echo "== $suite SF1 with WARP_COMBINE=2 (lines without a check mark)"; $X --data-dir /tmp/td${suite}1 bench $suite --sf 1 --runs 2 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -30; done
for s in 1 2 3 4; do timeout 100 $X --data-dir /tmp/tdr$s difftest --require-gpu --seed $((0x7e55e7a02026 + 2110 + s)) > /tmp/difftest-$s.txt 2>&1 & done; wait
echo "== difftest, seeds 2111-2114 past the default, 100 s each"
grep -hE "mismatch|MISMATCH|differ" /tmp/difftest-*.txt | grep -v " 0 mismatches" | head -20
grep -h "queries, " /tmp/difftest-*.txt | grep -v "^case"
cat /tmp/difftest-*.txt | grep -E "^case " | awk '{for (i=1;i<NF;i++) if ($(i+1) ~ /^queries,?$/) q+=$i} END {print q " queries in finished cases"}'
} > $OUT/log3-checks.txt 2>&1
cat $OUT/log3-checks.txt
date -u
