#!/usr/bin/env bash
# Run 5 of 2026-12-01 (pack C, 8115adf, as runs 3-4): SSB SF 100 (gen --load), 3 EXPLAIN
# ANALYZE a query, 2 rounds in turns: c ('always') and cmb16 (the same with
# TESSERA_EXP_MIN_BLOCKS=16: registers capped at 32 in the 128-thread kernels), to see
# what full occupancy would give q4.2's compact probe (40 registers, 12 blocks an SM).
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
M=benchmarks/results/gpu-2026-11-30h/medians.py
D=/tmp/td100/bench/ssb-sf100
grep -q lineorder $D/manifest.json 2>/dev/null || { rm -rf /tmp/td100; /usr/bin/time -f "gen --load %e s" $X --data-dir $D gen ssb --sf 100 --load > /dev/null 2> $OUT/log5-gen.txt; }
an() { dir=$1; n=$2; set=$3; f=/tmp/an.sql; : > $f; [ -n "$set" ] && echo "SET tessera.gpu_compact_tables = '$set';" >> $f
  for p in benchmarks/ssb/q*.sql; do q=$(basename $p .sql); s=$(sed '/^--/d' $p | tr '\n' ' ' | sed 's/;\s*$//'); echo "SELECT 'MARK $q' AS m;" >> $f; echo "$s;" >> $f; for i in $(seq $n); do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
  $X --format csv --data-dir $dir sql $f 2>&1 | grep -oE "MARK q[0-9.]+|GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB|rror.*"; }
for round in 1 2; do
  echo "== c round $round"; an $D 3 always
  echo "== cmb16 round $round"; TESSERA_EXP_MIN_BLOCKS=16 an $D 3 always
done > $OUT/log5-variants100.txt 2>&1
python3 $M $OUT/log5-variants100.txt > $OUT/log5-medians100.txt
cat $OUT/log5-gen.txt; cat $OUT/log5-medians100.txt | tr '|' '\n'
date -u
