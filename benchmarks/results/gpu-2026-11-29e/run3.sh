#!/usr/bin/env bash
# Run 3 of 2026-11-29e: the pack with the experiment TESSERA_EXP_L2_FETCH=N (the L2's
# DRAM fetch granularity, CU_LIMIT_MAX_L2_FETCH_GRANULARITY, set at context creation).
# SSB SF 20 q3.1, q2.1 and q4.1 with the defaults (d) and 32, 64 and 128 bytes (f32,
# f64, f128), two warm runs then 5 EXPLAIN ANALYZE each; SSB SF 20 d against f32, 15
# warm runs x 6 rounds in turns.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
[ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
D=/tmp/tdturns20/bench/ssb-sf20
first() { awk 'NR==1{h=$0} NR>1 && $0==h{exit} {print}' "$1"; }
for q in q3.1 q2.1 q4.1; do
  query=$(sed '/^--/d' benchmarks/ssb/$q.sql | tr '\n' ' ' | sed 's/;.*//')
  for e in d f32 f64 f128 d; do
    f=/tmp/v.sql; : > $f
    echo "$query;" >> $f; echo "$query;" >> $f
    for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $query;" >> $f; done
    ( case $e in f*) export TESSERA_EXP_L2_FETCH=${e#f};; esac; $X --format csv --data-dir $D sql $f > /tmp/v-$e.txt 2>&1 )
    echo "== $q $e: $(grep -oE 'GPU kernels: [0-9.]+ ms|rror.*' /tmp/v-$e.txt | tr '\n' ' ') answer $(first /tmp/v-$e.txt | md5sum | cut -c1-8) ($(first /tmp/v-$e.txt | wc -l) lines) $(grep -m1 L2_FETCH /tmp/v-$e.txt)"
  done
done > $OUT/log3-variants.txt 2>&1
cat $OUT/log3-variants.txt
mkdir -p /tmp/t3
OUT=/tmp/t3 SETTINGS="d f32:TESSERA_EXP_L2_FETCH=32" ROUNDS=6 bash $S turns > $OUT/log3-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log3-turns.txt | tail -20
tar -C /tmp -czf $OUT/run3-json.tgz t3
date -u
