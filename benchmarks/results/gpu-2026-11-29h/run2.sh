#!/usr/bin/env bash
# Run 2 of 2026-11-29h: run 3's pack (it ran after run 3). SSB SF 100: the GPU column cache after all 13
# queries in one process, plain, byte-narrowed (the default), with runs (r:
# TESSERA_EXP_NARROW_RUNS=1), bit-packed (b8: TESSERA_EXP_NARROW_BITS=8) and both;
# TPC-H SF 10, 5 warm runs, d r r d; random queries (difftest) with runs forced
# (TESSERA_EXP_NARROW_RUNS=2) and where they pay (=1).
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
{
[ -d /tmp/td100/bench/ssb-sf100 ] || /usr/bin/time -f "gen+load %e s" $X --data-dir /tmp/td100/bench/ssb-sf100 gen ssb --sf 100 --load 2>&1 | tail -2
f=/tmp/ssb100.sql; : > $f
for q in benchmarks/ssb/q*.sql; do sed '/^--/d' $q >> $f; done
echo "EXPLAIN ANALYZE $(sed '/^--/d' benchmarks/ssb/q4.3.sql)" >> $f
for e in TESSERA_EXP_NARROW=0 TESSERA_EXP_NARROW=1 TESSERA_EXP_NARROW_RUNS=1 TESSERA_EXP_NARROW_BITS=8 "TESSERA_EXP_NARROW_BITS=8 TESSERA_EXP_NARROW_RUNS=1"; do
  env $e $X --format csv --data-dir /tmp/td100/bench/ssb-sf100 sql $f 2>&1 | grep -oE "GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB in [0-9]+ columns|rror.*" | paste -sd' ' | sed "s/^/$e: /"
done
} > $OUT/log2-ssb100.txt 2>&1
cat $OUT/log2-ssb100.txt
rm -rf /tmp/td100
[ -d /tmp/tdh10/bench/tpch-sf10 ] || $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1
for e in d r r d; do
  ( case $e in r) export TESSERA_EXP_NARROW_RUNS=1;; esac
    $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 5 --engine tessera --json $OUT/tpch10-$e-$RANDOM.json 2>&1 | grep -E "^│ (q[0-9]+|total)" ) > /tmp/tp.txt
  echo "== TPC-H SF10 $e"; cat /tmp/tp.txt
done > $OUT/log2-tpch.txt 2>&1
grep -E "==|total" $OUT/log2-tpch.txt
TESSERA_EXP_NARROW_RUNS=2 SEEDS=4 SEED0=2105 NARROW_SEEDS=4 DIFFTEST_SECONDS=100 bash $S difftests > $OUT/log2-difftests.txt 2>&1
grep -vE "^(WARNING|ERROR)" $OUT/log2-difftests.txt | tail -8
date -u
