#!/usr/bin/env bash
# Run 2 of 2026-11-30d: SSB SF 20 bench, 15 warm runs x 4 rounds in turns, kernel graphs
# with folds on (d, the default) against TESSERA_EXP_KERNEL_GRAPH=0 (g0); TPC-H SF 10,
# 5 warm runs, d g0 g0 d.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; }
( [ -d /tmp/tdh10/bench/tpch-sf10 ] || $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1 ) &
grep -q lineorder /tmp/tdturns20/bench/ssb-sf20/manifest.json 2>/dev/null || { rm -rf /tmp/tdturns20; $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1; }
wait
# TPC-H SF 1 on the GPU against the CPU backend, the lines that differ (run 1 counted 4).
[ -d /tmp/tdtpch1/bench/tpch-sf1 ] || $X --data-dir /tmp/tdtpch1 bench tpch --sf 1 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1
q=/tmp/tpch-q.sql; : > $q
for f in benchmarks/tpch/q*.sql; do echo "-- $f" >> /tmp/names.txt; echo "$(sed '/^--/d' $f | tr '\n' ' ' | sed 's/;\s*$//');" >> $q; done
$X --format csv --data-dir /tmp/tdtpch1/bench/tpch-sf1 sql $q > /tmp/g.out 2>&1
$X --format csv --data-dir /tmp/tdtpch1/bench/tpch-sf1 sql <(echo "SET tessera.device = 'cpu';"; cat $q) > /tmp/c.out 2>&1
{ echo "== TPC-H SF1 GPU against the CPU backend"; diff /tmp/c.out /tmp/g.out; } > $OUT/log2-tpch1-diff.txt 2>&1
cat $OUT/log2-tpch1-diff.txt | head -20
mkdir -p /tmp/t2
OUT=/tmp/t2 SETTINGS="d g0:TESSERA_EXP_KERNEL_GRAPH=0" ROUNDS=4 bash $S turns > $OUT/log2-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log2-turns.txt | tail -20
( cd /tmp && tar -czf $OUT/run2-json.tgz t2 )
for m in 1 0 0 1; do
  TESSERA_EXP_KERNEL_GRAPH=$m $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 5 --engine tessera 2>&1 | grep -E "^│ (q[0-9]+|total)" > /tmp/tp.txt
  echo "== TPC-H SF10 TESSERA_EXP_KERNEL_GRAPH=$m"; cat /tmp/tp.txt
done > $OUT/log2-tpch.txt 2>&1
grep -E "==|total" $OUT/log2-tpch.txt
date -u
