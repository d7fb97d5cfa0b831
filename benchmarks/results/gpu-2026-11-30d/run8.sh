#!/usr/bin/env bash
# Run 8 of 2026-11-30d: run 6's pack with TESSERA_EXP_KERNEL_GRAPH=0 (the committed
# defaults): SSB SF 20 bench, 15 warm runs x 3 rounds; TPC-H SF 10, 5 warm runs x 2 (the
# build cache now keys builds that probe other tables with their keys).
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; }
( [ -d /tmp/tdh10/bench/tpch-sf10 ] || $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1 ) &
grep -q lineorder /tmp/tdturns20/bench/ssb-sf20/manifest.json 2>/dev/null || { rm -rf /tmp/tdturns20; $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1; }
wait
mkdir -p /tmp/t8
OUT=/tmp/t8 SETTINGS="d:TESSERA_EXP_KERNEL_GRAPH=0" ROUNDS=3 bash $S turns > $OUT/log8-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log8-turns.txt | tail -20
( cd /tmp && tar -czf $OUT/run8-json.tgz t8 )
for r in 1 2; do
  TESSERA_EXP_KERNEL_GRAPH=0 $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 5 --engine tessera 2>&1 | grep -E "^│ (q[0-9]+|total)" > /tmp/tp.txt
  echo "== TPC-H SF10 round $r"; cat /tmp/tp.txt
done > $OUT/log8-tpch.txt 2>&1
grep -E "==|total" $OUT/log8-tpch.txt
date -u
