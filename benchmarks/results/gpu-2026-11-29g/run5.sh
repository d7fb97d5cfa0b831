#!/usr/bin/env bash
# Run 5 of 2026-11-29g: run 4's pack. TPC-H SF 10 with the defaults (d) against every
# column that allows it bit-packed (b8: TESSERA_EXP_NARROW_BITS=8), 5 warm runs, twice
# in turns (bench's kernel figures); random queries (difftest: GPU against the CPU
# backend and DataFusion) under =8.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
[ -d /tmp/tdh10/bench/tpch-sf10 ] || $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1
for e in d b8 b8 d; do
  ( case $e in b8) export TESSERA_EXP_NARROW_BITS=8;; esac
    $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 5 --engine tessera --json $OUT/tpch10-$e-$RANDOM.json 2>&1 | grep -E "^│ (q[0-9]+|total)" ) > /tmp/tp.txt
  echo "== TPC-H SF10 $e"; cat /tmp/tp.txt
done > $OUT/log5-tpch.txt 2>&1
grep -E "==|total" $OUT/log5-tpch.txt
TESSERA_EXP_NARROW_BITS=8 SEEDS=4 SEED0=2005 NARROW_SEEDS=4 DIFFTEST_SECONDS=120 bash $S difftests > $OUT/log5-difftests.txt 2>&1
grep -vE "^(WARNING|ERROR)" $OUT/log5-difftests.txt | tail -15
date -u
