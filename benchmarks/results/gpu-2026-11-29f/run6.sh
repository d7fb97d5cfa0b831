#!/usr/bin/env bash
# Run 6 of 2026-11-29f: run 4's pack (the final code). SSB q3.1 at SF 20 with fewer
# resident blocks than its occupancy allows (12 an SM at 40 registers): grids of 11, 10,
# 9 and 8 blocks an SM (TESSERA_EXP_BLOCKS_PER_SM), each block walking more tiles,
# against the defaults (d), two warm runs then 5 EXPLAIN ANALYZE each, twice in turns.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
[ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
D=/tmp/tdturns20/bench/ssb-sf20
first() { awk 'NR==1{h=$0} NR>1 && $0==h{exit} {print}' "$1"; }
query=$(sed '/^--/d' benchmarks/ssb/q3.1.sql | tr '\n' ' ' | sed 's/;.*//')
for e in d 11 10 9 8 d 11 10 9 8; do
  f=/tmp/v.sql; : > $f
  echo "$query;" >> $f; echo "$query;" >> $f
  for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $query;" >> $f; done
  ( [ $e = d ] || export TESSERA_EXP_BLOCKS_PER_SM=$e; $X --format csv --data-dir $D sql $f > /tmp/v-$e.txt 2>&1 )
  echo "== q3.1 $e: $(grep -oE 'GPU kernels: [0-9.]+ ms|rror.*' /tmp/v-$e.txt | tr '\n' ' ') answer $(first /tmp/v-$e.txt | md5sum | cut -c1-8) ($(first /tmp/v-$e.txt | wc -l) lines)"
done > $OUT/log6-variants.txt 2>&1
cat $OUT/log6-variants.txt
date -u
