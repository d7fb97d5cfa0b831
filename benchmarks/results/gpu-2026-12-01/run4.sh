#!/usr/bin/env bash
# Run 4 of 2026-12-01 (pack C, 8115adf, as run 3). TPC-H SF 10 (gen --load), 3 EXPLAIN
# ANALYZE a query, 2 rounds in turns: d (defaults) and d0 (TESSERA_EXP_ZONE_CARRY=0): the
# carry in the pipelines whose leading filters have bounds.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
M=benchmarks/results/gpu-2026-11-30h/medians.py
D=/tmp/tdh10/bench/tpch-sf10
grep -q lineitem $D/manifest.json 2>/dev/null || { rm -rf /tmp/tdh10; /usr/bin/time -f "gen --load %e s" $X --data-dir $D gen tpch --sf 10 --load > /dev/null 2> $OUT/log4-gen.txt; }
an() { dir=$1; n=$2; f=/tmp/an.sql; : > $f
  for p in benchmarks/tpch/q*.sql; do q=$(basename $p .sql | sed 's/^q0*/q/'); s=$(sed '/^--/d' $p | tr '\n' ' ' | sed 's/;\s*$//'); echo "SELECT 'MARK $q.0' AS m;" >> $f; echo "$s;" >> $f; for i in $(seq $n); do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
  $X --format csv --data-dir $dir sql $f 2>&1 | grep -oE "MARK q[0-9.]+|GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB|rror.*"; }
for round in 1 2; do
  echo "== d round $round"; an $D 3
  echo "== d0 round $round"; TESSERA_EXP_ZONE_CARRY=0 an $D 3
done > $OUT/log4-variants-tpch10.txt 2>&1
python3 $M $OUT/log4-variants-tpch10.txt > $OUT/log4-medians-tpch10.txt
cat $OUT/log4-gen.txt; cat $OUT/log4-medians-tpch10.txt | tr '|' '\n'
date -u
