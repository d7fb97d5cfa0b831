#!/usr/bin/env bash
# Run 4 of 2026-11-29d: the pack with global copies by default where 256 rows a slot are
# estimated (the seen flags one array) and the experiment TESSERA_EXP_BLOCK_SEEN=1 (a
# block marks the groups it saw in a shared bitmap, writing a group's global seen flag
# the first time, instead of every row reading the global flag). GPU unit tests; SSB and
# TPC-H SF 1 answers and the slt files with both the block marks and 8 copies forced;
# SSB SF 20 q3.1 with the defaults (d), the block marks (b) and no copies (x), two warm
# runs then 5 EXPLAIN ANALYZE each; SSB SF 20 d, b and x, 15 warm runs x 10 rounds in
# turns.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
( [ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1 ) &
gen=$!
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped"; done > $OUT/log4-tests.txt 2>&1
cat $OUT/log4-tests.txt
export TESSERA_EXP_BLOCK_SEEN=1 TESSERA_EXP_GLOBAL_COPIES=8
{ echo "== answers (TESSERA_EXP_BLOCK_SEEN=1 TESSERA_EXP_GLOBAL_COPIES=8)"; OUT=/tmp/x4 bash $S answers 2>&1 | grep -vE "^(WARNING|ERROR)"
  echo "== results (TESSERA_EXP_BLOCK_SEEN=1 TESSERA_EXP_GLOBAL_COPIES=8)"; mkdir -p /tmp/x4r; OUT=/tmp/x4r bash $S results 2>&1 | grep -hE "identical|errors|differ|FAIL"; } > $OUT/log4-answers.txt 2>&1
unset TESSERA_EXP_BLOCK_SEEN TESSERA_EXP_GLOBAL_COPIES
cat $OUT/log4-answers.txt
wait $gen
D=/tmp/tdturns20/bench/ssb-sf20
first() { awk 'NR==1{h=$0} NR>1 && $0==h{exit} {print}' "$1"; }
query=$(sed '/^--/d' benchmarks/ssb/q3.1.sql | tr '\n' ' ' | sed 's/;.*//')
for e in d b x; do
  f=/tmp/v.sql; : > $f
  echo "$query;" >> $f; echo "$query;" >> $f
  for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $query;" >> $f; done
  ( case $e in x) export TESSERA_EXP_GLOBAL_COPIES=1;; b) export TESSERA_EXP_BLOCK_SEEN=1;; esac; $X --format csv --data-dir $D sql $f > /tmp/v-$e.txt 2>&1 )
  echo "== q3.1 $e: $(grep -oE 'GPU kernels: [0-9.]+ ms|rror.*' /tmp/v-$e.txt | tr '\n' ' ') answer $(first /tmp/v-$e.txt | md5sum | cut -c1-8) ($(first /tmp/v-$e.txt | wc -l) lines)"
done > $OUT/log4-variants.txt 2>&1
cat $OUT/log4-variants.txt
mkdir -p /tmp/t4
OUT=/tmp/t4 SETTINGS="d b:TESSERA_EXP_BLOCK_SEEN=1 x:TESSERA_EXP_GLOBAL_COPIES=1" ROUNDS=10 bash $S turns > $OUT/log4-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log4-turns.txt | tail -20
tar -C /tmp -czf $OUT/run4-json.tgz t4
date -u
