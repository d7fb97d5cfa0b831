#!/usr/bin/env bash
# Run 3 of 2026-11-29c (run 1's pack): what group domains of the dimension values present
# would give. A group key that is a dimension's dictionary string has its whole
# dictionary as its domain (q3.1: 25 nations x 25 x 7 years = 4,375 slots, 150 present;
# q4.3: 1.75 M slots, 800 present). Copies of the dimensions holding only the rows the
# query's filters keep have dictionaries of the values present, so the same queries over
# them group into domains of those values alone. Each query and its variant over the
# copies: two warm runs, then 5 EXPLAIN ANALYZE (kernel times), answers compared.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u
[ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
D=/tmp/tdturns20/bench/ssb-sf20
$X --data-dir $D sql /dev/stdin <<'S' 2>&1 | tail -3
CREATE TABLE customer_asia AS SELECT * FROM customer WHERE c_region = 'ASIA';
CREATE TABLE supplier_asia AS SELECT * FROM supplier WHERE s_region = 'ASIA';
CREATE TABLE customer_us AS SELECT * FROM customer WHERE c_nation = 'UNITED STATES';
CREATE TABLE supplier_us AS SELECT * FROM supplier WHERE s_nation = 'UNITED STATES';
CREATE TABLE part_14 AS SELECT * FROM part WHERE p_category = 'MFGR#14';
CREATE TABLE part_12 AS SELECT * FROM part WHERE p_category = 'MFGR#12';
CREATE TABLE supplier_america AS SELECT * FROM supplier WHERE s_region = 'AMERICA';
SELECT count(*) FROM customer_asia;
S
q() { sed '/^--/d' benchmarks/ssb/$1.sql | tr '\n' ' ' | sed 's/;.*//'; }
cat > /tmp/variants.txt <<Q
q3.1|$(q q3.1)
q3.1-present|$(q q3.1 | sed 's/customer,/customer_asia,/; s/supplier,/supplier_asia,/')
q3.2|$(q q3.2)
q3.2-present|$(q q3.2 | sed 's/customer,/customer_us,/; s/supplier,/supplier_us,/')
q4.3|$(q q4.3)
q4.3-present|$(q q4.3 | sed 's/supplier,/supplier_us,/; s/part,/part_14,/; s/part$/part_14/; s/part /part_14 /')
q2.1|$(q q2.1)
q2.1-present|$(q q2.1 | sed 's/part,/part_12,/; s/supplier /supplier_america /; s/supplier$/supplier_america/')
Q
cat /tmp/variants.txt
while IFS='|' read -r name query; do
  f=/tmp/v.sql; : > $f
  echo "$query;" >> $f; echo "$query;" >> $f
  for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $query;" >> $f; done
  echo "== $name"
  $X --format csv --data-dir $D sql $f > /tmp/v-$name.txt 2>&1
  grep -oE "GPU kernels: [0-9.]+ ms|rror.*" /tmp/v-$name.txt | tr '\n' ' '; echo
  grep -E "kernel [0-9.]+ ms" /tmp/v-$name.txt | grep -E "[0-9]{8,} rows in" | grep -oE "kernel [0-9.]+ ms" | paste -sd" "
  $X --format csv --data-dir $D -c "$query" 2>&1 | md5sum
done < /tmp/variants.txt > $OUT/log3-variants.txt 2>&1
cat $OUT/log3-variants.txt
for n in q3.1 q3.1-present q4.3 q4.3-present; do echo "######## $n"; tail -14 /tmp/v-$n.txt; done > $OUT/log3-explain.txt 2>&1
date -u
