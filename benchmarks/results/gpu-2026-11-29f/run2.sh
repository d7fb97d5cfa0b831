#!/usr/bin/env bash
# Run 2 of 2026-11-29f: run 1's pack. Why SSB q2.1 got slower with narrowed payloads
# (0.473 against 0.391 ms of kernels in run 1): its EXPLAIN ANALYZE with the defaults
# (d) and payloads at their widths (w), whole; TPC-H SF 10 d against w, 5 warm runs,
# twice in turns (bench's kernel figures).
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
( [ -d /tmp/tdh10/bench/tpch-sf10 ] || $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1 ) &
gen=$!
[ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
D=/tmp/tdturns20/bench/ssb-sf20
query=$(sed '/^--/d' benchmarks/ssb/q2.1.sql | tr '\n' ' ' | sed 's/;.*//')
for e in d w; do
  f=/tmp/v.sql; : > $f
  echo "$query;" >> $f; echo "$query;" >> $f
  for i in 1 2 3; do echo "EXPLAIN ANALYZE $query;" >> $f; done
  ( case $e in w) export TESSERA_EXP_NARROW_PAYLOADS=0;; esac; $X --data-dir $D sql $f > $OUT/log2-q2.1-$e.txt 2>&1 )
done
grep -E "GPU kernels" $OUT/log2-q2.1-*.txt
wait $gen
H=/tmp/tdh10
for e in d w w d; do
  ( case $e in w) export TESSERA_EXP_NARROW_PAYLOADS=0;; esac
    $X --data-dir $H bench tpch --sf 10 --runs 5 --engine tessera --json /tmp/tp-$e-$RANDOM.json 2>&1 | grep -E "^│ (q[0-9]+|total)" ) > /tmp/tp.txt
  echo "== TPC-H SF10 $e"; cat /tmp/tp.txt
done > $OUT/log2-tpch.txt 2>&1
grep -E "==|total" $OUT/log2-tpch.txt
date -u
