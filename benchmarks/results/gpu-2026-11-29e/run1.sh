#!/usr/bin/env bash
# Run 1 of 2026-11-29e: the pack whose global arrays in copies leave the seen flags to
# their fold where an accumulator shows the groups present (aggregate::presence; SSB
# q3.1's SUM(lo_revenue) of values > 0). GPU unit tests (gpu_fold_copies_sums_every_
# copy_into_the_first now checks the flags the fold sets); SSB and TPC-H SF 1 answers
# and the slt files with 8 copies forced (every aggregation that can take copies, and
# with them a witness where it has one); SSB SF 20 q3.1 with the defaults (d), the
# flags marked per row (p0: TESSERA_EXP_PRESENCE=0), no copies (x) and 4 items a thread
# (i4), two warm runs then 5 EXPLAIN ANALYZE each; SSB SF 20 d against p0, 15 warm runs
# x 8 rounds in turns.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
( [ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1 ) &
gen=$!
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped"; done > $OUT/log1-tests.txt 2>&1
cat $OUT/log1-tests.txt
export TESSERA_EXP_GLOBAL_COPIES=8
{ echo "== answers (TESSERA_EXP_GLOBAL_COPIES=8)"; OUT=/tmp/x1 bash $S answers 2>&1 | grep -vE "^(WARNING|ERROR)"
  echo "== results (TESSERA_EXP_GLOBAL_COPIES=8)"; mkdir -p /tmp/x1r; OUT=/tmp/x1r bash $S results 2>&1 | grep -hE "identical|errors|differ|FAIL"; } > $OUT/log1-answers.txt 2>&1
unset TESSERA_EXP_GLOBAL_COPIES
cat $OUT/log1-answers.txt
wait $gen
D=/tmp/tdturns20/bench/ssb-sf20
first() { awk 'NR==1{h=$0} NR>1 && $0==h{exit} {print}' "$1"; }
query=$(sed '/^--/d' benchmarks/ssb/q3.1.sql | tr '\n' ' ' | sed 's/;.*//')
for e in d p0 x i4 d; do
  f=/tmp/v.sql; : > $f
  [ $e = i4 ] && echo "SET tessera.gpu_items_per_thread = 4;" >> $f
  echo "$query;" >> $f; echo "$query;" >> $f
  for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $query;" >> $f; done
  ( case $e in x) export TESSERA_EXP_GLOBAL_COPIES=1;; p0) export TESSERA_EXP_PRESENCE=0;; esac; $X --format csv --data-dir $D sql $f > /tmp/v-$e.txt 2>&1 )
  echo "== q3.1 $e: $(grep -oE 'GPU kernels: [0-9.]+ ms|rror.*' /tmp/v-$e.txt | tr '\n' ' ') answer $(first /tmp/v-$e.txt | md5sum | cut -c1-8) ($(first /tmp/v-$e.txt | wc -l) lines)"
  grep -E "Aggregate|probe|Pipeline" /tmp/v-$e.txt | head -4
done > $OUT/log1-variants.txt 2>&1
cat $OUT/log1-variants.txt
mkdir -p /tmp/t1
OUT=/tmp/t1 SETTINGS="d p0:TESSERA_EXP_PRESENCE=0" ROUNDS=8 bash $S turns > $OUT/log1-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log1-turns.txt | tail -20
tar -C /tmp -czf $OUT/run1-json.tgz t1
date -u
