#!/usr/bin/env bash
# Run 2 of 2026-11-29d: the pack with global group arrays in copies by default where an
# aggregation is estimated to add 256 rows a slot or more (8 copies; the seen flags too,
# TESSERA_EXP_SEEN_COPIES=0 keeps one seen array; TESSERA_EXP_GLOBAL_COPIES=N forces N,
# 1 none). GPU unit tests; SSB and TPC-H SF 1 answers and the slt files with 8 copies
# forced (the rule takes none at SF 1); SSB SF 20 q3.1 (the one SSB aggregation the rule
# takes) with the defaults (d), one seen array (s0) and no copies (x): two warm runs, then
# 5 EXPLAIN ANALYZE each, the kernels of d dumped to count those with copies; SSB SF 20
# d, s0 and x, 15 warm runs x 8 rounds in turns.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
( [ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1 ) &
gen=$!
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped"; done > $OUT/log2-tests.txt 2>&1
cat $OUT/log2-tests.txt
{ echo "== answers (TESSERA_EXP_GLOBAL_COPIES=8)"; TESSERA_EXP_GLOBAL_COPIES=8 OUT=/tmp/x2 bash $S answers 2>&1 | grep -vE "^(WARNING|ERROR)"
  echo "== results (TESSERA_EXP_GLOBAL_COPIES=8)"; mkdir -p /tmp/x2r; TESSERA_EXP_GLOBAL_COPIES=8 OUT=/tmp/x2r bash $S results 2>&1 | grep -hE "identical|errors|differ|FAIL"; } > $OUT/log2-answers.txt 2>&1
cat $OUT/log2-answers.txt
wait $gen
D=/tmp/tdturns20/bench/ssb-sf20
first() { awk 'NR==1{h=$0} NR>1 && $0==h{exit} {print}' "$1"; }
for q in q3.1; do
  query=$(sed '/^--/d' benchmarks/ssb/$q.sql | tr '\n' ' ' | sed 's/;.*//')
  for e in d s0 x; do
    f=/tmp/v.sql; : > $f
    echo "$query;" >> $f; echo "$query;" >> $f
    for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $query;" >> $f; done
    case $e in s0) export TESSERA_EXP_SEEN_COPIES=0;; x) export TESSERA_EXP_GLOBAL_COPIES=1;; esac
    $X --format csv --data-dir $D sql $f > /tmp/v-$q-$e.txt 2>&1
    unset TESSERA_EXP_SEEN_COPIES TESSERA_EXP_GLOBAL_COPIES
    echo "== $q $e: $(grep -oE 'GPU kernels: [0-9.]+ ms|rror.*' /tmp/v-$q-$e.txt | tr '\n' ' ') answer $(first /tmp/v-$q-$e.txt | md5sum | cut -c1-8) ($(first /tmp/v-$q-$e.txt | wc -l) lines)"
  done
done > $OUT/log2-variants.txt 2>&1
rm -rf /tmp/kd; mkdir -p /tmp/kd
# Kernels are dumped only when compiled: the store's kernel cache set aside meanwhile.
mv $D/kernels $D/kernels.keep
TESSERA_DUMP_KERNELS=/tmp/kd $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera > /dev/null 2>&1
rm -rf $D/kernels; mv $D/kernels.keep $D/kernels
echo "== SSB SF 20 kernels compiled with the defaults: $(ls /tmp/kd/*.cu 2>/dev/null | wc -l); adding into copies: $(grep -l 'out_a0 += (size_t)(blockIdx.x & 7u)' /tmp/kd/*.cu 2>/dev/null | wc -l) ($(grep -ho 'Pipeline [0-9]*: generated' $(grep -l 'out_a0 += (size_t)(blockIdx.x & 7u)' /tmp/kd/*.cu 2>/dev/null) 2>/dev/null | paste -sd' '))" >> $OUT/log2-variants.txt
cat $OUT/log2-variants.txt
mkdir -p /tmp/t2
OUT=/tmp/t2 SETTINGS="d s0:TESSERA_EXP_SEEN_COPIES=0 x:TESSERA_EXP_GLOBAL_COPIES=1" ROUNDS=8 bash $S turns > $OUT/log2-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log2-turns.txt | tail -22
tar -C /tmp -czf $OUT/run2-json.tgz t2
date -u
