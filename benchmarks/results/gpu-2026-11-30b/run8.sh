#!/usr/bin/env bash
# Run 8 of 2026-11-30b: the committed rule (54f8bdd) on TPC-H SF 10, 5 warm runs, d and
# TESSERA_EXP_WIDE_BLOCKS=0 (w0) twice each in turns; random queries with the defaults,
# 8 seeds x 200 s (SEED0=7500).
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log8-tpch.txt
[ -d /tmp/tdh10/bench/tpch-sf10 ] || $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1
for w in 1 0 0 1; do
  TESSERA_EXP_WIDE_BLOCKS=$w $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 5 --engine tessera 2>&1 | grep -E "^│ (q[0-9]+|total)" > /tmp/tp.txt
  echo "== TPC-H SF10 TESSERA_EXP_WIDE_BLOCKS=$w"; cat /tmp/tp.txt
done >> $OUT/log8-tpch.txt 2>&1
grep -E "==|total" $OUT/log8-tpch.txt
SEEDS=8 SEED0=7500 NARROW_SEEDS=8 DIFFTEST_SECONDS=200 bash $S difftests > $OUT/log8-difftests.txt 2>&1
grep -vE "^(WARNING|ERROR)" $OUT/log8-difftests.txt | tail -8
date -u
