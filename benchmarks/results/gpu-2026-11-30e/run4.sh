#!/usr/bin/env bash
# Run 4 of 2026-11-30e (run 1's pack): SSB SF 20 under '12GB' (lineorder compact), with
# TESSERA_EXP_COMPACT_INDEX32=0, every query's kernels, 5 EXPLAIN ANALYZE each, in turns
# over 2 rounds: it0 (items a thread chosen per pipeline: 2 for star joins, 8 for the lean
# q1.x), it4 and it8 (SET tessera.gpu_items_per_thread = 4 / 8 for every pipeline).
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; }
grep -q lineorder /tmp/tdturns20/bench/ssb-sf20/manifest.json 2>/dev/null || { rm -rf /tmp/tdturns20; $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1; }
P=/tmp/tdturns20/bench/ssb-sf20
export TESSERA_EXP_COMPACT_INDEX32=0
an() { f=/tmp/an.sql; : > $f; echo "SET tessera.gpu_memory_limit = '12GB';" >> $f; [ -n "$1" ] && echo "SET tessera.gpu_items_per_thread = $1;" >> $f
  for q in benchmarks/ssb/q*.sql; do s=$(sed '/^--/d' $q | tr '\n' ' ' | sed 's/;\s*$//'); echo "$s;" >> $f; for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
  $X --format csv --data-dir $P sql $f 2>&1 | grep -oE "GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB|rror.*"; }
for round in 1 2; do
  echo "== it0 round $round"; an ""
  echo "== it4 round $round"; an 4
  echo "== it8 round $round"; an 8
done > $OUT/log4-variants.txt 2>&1
python3 benchmarks/results/gpu-2026-11-30e/medians.py $OUT/log4-variants.txt it0 it4 it8 > $OUT/log4-medians.txt
cat $OUT/log4-medians.txt
date -u
