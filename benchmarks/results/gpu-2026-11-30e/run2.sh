#!/usr/bin/env bash
# Run 2 of 2026-11-30e (run 1's pack): SSB SF 20 under '12GB' (lineorder compact), every
# query's kernels, 5 EXPLAIN ANALYZE each, in turns over 2 rounds: lim (the defaults:
# runs lanes and 32-bit lean rows), li (TESSERA_EXP_COMPACT_INDEX32=0: lanes only), p0
# (TESSERA_EXP_PREFETCH=0: no tile loaded ahead), mb16 (TESSERA_EXP_MIN_BLOCKS=16: at most
# 32 registers a thread at 128 threads).
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; }
grep -q lineorder /tmp/tdturns20/bench/ssb-sf20/manifest.json 2>/dev/null || { rm -rf /tmp/tdturns20; $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1; }
P=/tmp/tdturns20/bench/ssb-sf20
an() { f=/tmp/an.sql; : > $f; [ -n "$1" ] && echo "SET tessera.gpu_memory_limit = '$1';" >> $f
  for q in benchmarks/ssb/q*.sql; do s=$(sed '/^--/d' $q | tr '\n' ' ' | sed 's/;\s*$//'); echo "$s;" >> $f; for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
  $X --format csv --data-dir $P sql $f 2>&1 | grep -oE "GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB|rror.*"; }
for round in 1 2; do
  echo "== lim round $round"; an 12GB
  echo "== li round $round"; TESSERA_EXP_COMPACT_INDEX32=0 an 12GB
  echo "== p0 round $round"; TESSERA_EXP_PREFETCH=0 an 12GB
  echo "== mb16 round $round"; TESSERA_EXP_MIN_BLOCKS=16 an 12GB
done > $OUT/log2-variants.txt 2>&1
python3 benchmarks/results/gpu-2026-11-30e/medians.py $OUT/log2-variants.txt lim li p0 mb16 > $OUT/log2-medians.txt
cat $OUT/log2-medians.txt
date -u
