#!/usr/bin/env bash
# Run 6 of 2026-11-28i (46278d7's pack: warp combining's peer folds as one template): the
# GPU unit tests (the device test of warp-combined shared sums among them); SSB SF1 answers
# checked with TESSERA_EXP_WARP_COMBINE=1; q3.1 and its nation-pair grouping at SF20, five
# EXPLAIN ANALYZE each, defaults (d) and warp combining (w).
mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -
X=/tmp/tessera-gpu/bin/tessera
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
{
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped"; done
echo "== SSB SF1 with WARP_COMBINE=1 (lines without a check mark)"
TESSERA_EXP_WARP_COMBINE=1 $X --data-dir /tmp/td1 bench ssb --sf 1 --runs 2 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓"
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
J31="from customer, lineorder, supplier, date where lo_custkey = c_custkey and lo_suppkey = s_suppkey and lo_orderdate = d_datekey and c_region = 'ASIA' and s_region = 'ASIA' and d_year >= 1992 and d_year <= 1997"
for name in q3.1 q3.1-nations; do
  q="select c_nation, s_nation, d_year, sum(lo_revenue) as revenue $J31 group by c_nation, s_nation, d_year"
  [ $name = q3.1-nations ] && q="select c_nation, s_nation, sum(lo_revenue) as revenue $J31 group by c_nation, s_nation"
  f=/tmp/v.sql; : > $f; echo "$q;" >> $f; echo "$q;" >> $f
  for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $q;" >> $f; done
  for e in d w; do
    ( [ $e = w ] && export TESSERA_EXP_WARP_COMBINE=1
      $X --format csv --data-dir /tmp/td20/bench/ssb-sf20 sql $f > /tmp/v-$e-$name.txt 2>&1 )
    echo "$e $name $(grep -E "kernel [0-9.]+ ms" /tmp/v-$e-$name.txt | grep -E "[0-9]{8,} rows in" | grep -oE "kernel [0-9.]+" | awk '{print $2}' | sort -n | paste -sd' ') errors=$(grep -ciE 'error|panick' /tmp/v-$e-$name.txt)"
  done
  # The two settings' answers, sorted, are the same: one checksum counted twice.
  for e in d w; do ( [ $e = w ] && export TESSERA_EXP_WARP_COMBINE=1; $X --format csv --data-dir /tmp/td20/bench/ssb-sf20 -c "$q" | sort | md5sum ); done | uniq -c
done
} > $OUT/log6-tests-combine.txt 2>&1
cat $OUT/log6-tests-combine.txt
date -u
