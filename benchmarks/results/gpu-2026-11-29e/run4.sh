#!/usr/bin/env bash
# Run 4 of 2026-11-29e: the pack with the experiment TESSERA_EXP_CARRY=1 (a whole tile's
# last stage, the aggregation, runs in the next tile's iteration between that tile's
# lookups and its second-to-last stage: the late loads' latency spent on the next
# tile's lookups; print::carried). GPU unit tests; SSB and TPC-H SF 1 answers and the
# slt files with it on; SSB SF 20 q3.1, q2.1, q3.2, q4.2 and q4.3 with the defaults (d)
# and with it (c), two warm runs then 5 EXPLAIN ANALYZE each; SSB SF 20 d against c,
# 15 warm runs x 8 rounds in turns.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
( [ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1 ) &
gen=$!
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped"; done > $OUT/log4-tests.txt 2>&1
cat $OUT/log4-tests.txt
export TESSERA_EXP_CARRY=1
{ echo "== answers (TESSERA_EXP_CARRY=1)"; OUT=/tmp/x4 bash $S answers 2>&1 | grep -vE "^(WARNING|ERROR)"
  echo "== results (TESSERA_EXP_CARRY=1)"; mkdir -p /tmp/x4r; OUT=/tmp/x4r bash $S results 2>&1 | grep -hE "identical|errors|differ|FAIL"; } > $OUT/log4-answers.txt 2>&1
unset TESSERA_EXP_CARRY
cat $OUT/log4-answers.txt
wait $gen
D=/tmp/tdturns20/bench/ssb-sf20
first() { awk 'NR==1{h=$0} NR>1 && $0==h{exit} {print}' "$1"; }
for q in q3.1 q2.1 q3.2 q4.2 q4.3; do
  query=$(sed '/^--/d' benchmarks/ssb/$q.sql | tr '\n' ' ' | sed 's/;.*//')
  for e in d c d c; do
    f=/tmp/v.sql; : > $f
    echo "$query;" >> $f; echo "$query;" >> $f
    for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $query;" >> $f; done
    ( case $e in c) export TESSERA_EXP_CARRY=1;; esac; $X --format csv --data-dir $D sql $f > /tmp/v-$e.txt 2>&1 )
    echo "== $q $e: $(grep -oE 'GPU kernels: [0-9.]+ ms|rror.*' /tmp/v-$e.txt | tr '\n' ' ') answer $(first /tmp/v-$e.txt | md5sum | cut -c1-8) ($(first /tmp/v-$e.txt | wc -l) lines)"
  done
done > $OUT/log4-variants.txt 2>&1
cat $OUT/log4-variants.txt
mkdir -p /tmp/t4
OUT=/tmp/t4 SETTINGS="d c:TESSERA_EXP_CARRY=1" ROUNDS=8 bash $S turns > $OUT/log4-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log4-turns.txt | tail -20
tar -C /tmp -czf $OUT/run4-json.tgz t4
date -u
