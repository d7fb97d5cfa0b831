#!/usr/bin/env bash
# Run 1 of 2026-11-29d: the pack with TESSERA_EXP_GLOBAL_COPIES=N (a grouped
# aggregation's global arrays in N copies, block b adding into copy b % N, folded by
# tessera_fold_copies after the kernel; off by default). GPU unit tests (the new
# gpu_fold_copies_sums_every_copy_into_the_first among them); SSB and TPC-H SF 1 answers
# and the slt files with 8 copies; SSB SF 20 q3.1, q2.1, q2.2, q2.3 and q4.2 (the
# queries whose groups go to global arrays of at most 1 MiB of copies) with 1, 4, 8, 16
# and 32 copies: two warm runs, then 5 EXPLAIN ANALYZE each; SSB SF 20 with the defaults
# (d) against 8 copies (c8) and 16 (c16), 15 warm runs x 8 rounds in turns.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
( [ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1 ) &
gen=$!
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped"; done > $OUT/log1-tests.txt 2>&1
cat $OUT/log1-tests.txt
{ echo "== answers (TESSERA_EXP_GLOBAL_COPIES=8)"; TESSERA_EXP_GLOBAL_COPIES=8 OUT=/tmp/x1 bash $S answers 2>&1 | grep -vE "^(WARNING|ERROR)"
  echo "== results (TESSERA_EXP_GLOBAL_COPIES=8)"; mkdir -p /tmp/x1r; TESSERA_EXP_GLOBAL_COPIES=8 OUT=/tmp/x1r bash $S results 2>&1 | grep -hE "identical|errors|differ|FAIL"; } > $OUT/log1-answers.txt 2>&1
cat $OUT/log1-answers.txt
wait $gen
D=/tmp/tdturns20/bench/ssb-sf20
for q in q3.1 q2.1 q2.2 q2.3 q4.2; do
  query=$(sed '/^--/d' benchmarks/ssb/$q.sql | tr '\n' ' ' | sed 's/;.*//')
  for c in 1 4 8 16 32; do
    f=/tmp/v.sql; : > $f
    echo "$query;" >> $f; echo "$query;" >> $f
    for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $query;" >> $f; done
    TESSERA_EXP_GLOBAL_COPIES=$c $X --format csv --data-dir $D sql $f > /tmp/v-$q-$c.txt 2>&1
    echo "== $q copies $c: $(grep -oE 'GPU kernels: [0-9.]+ ms|rror.*' /tmp/v-$q-$c.txt | tr '\n' ' ') answer $(awk 'NR==1{h=$0} NR>1 && $0==h{exit} {print}' /tmp/v-$q-$c.txt | md5sum | cut -c1-8) ($(awk 'NR==1{h=$0} NR>1 && $0==h{exit} {print}' /tmp/v-$q-$c.txt | wc -l) lines)"
  done
done > $OUT/log1-variants.txt 2>&1
cat $OUT/log1-variants.txt
mkdir -p /tmp/t1
OUT=/tmp/t1 SETTINGS="d c8:TESSERA_EXP_GLOBAL_COPIES=8 c16:TESSERA_EXP_GLOBAL_COPIES=16" ROUNDS=8 bash $S turns > $OUT/log1-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log1-turns.txt | tail -22
tar -C /tmp -czf $OUT/run1-json.tgz t1
date -u
