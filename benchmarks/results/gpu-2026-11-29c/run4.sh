#!/usr/bin/env bash
# Run 4 of 2026-11-29c: the pack with the two-launch chain of a large group domain feeding
# an ORDER BY (tessera_list_seen, tessera_listed_sorted_records; TESSERA_EXP_LISTED_CHAIN=0
# gives the compaction, gathers and rank as before) on top of the early launch. GPU unit
# tests (the new gpu_listed_sorted_records_match_a_stable_sort among them); SSB and TPC-H
# SF 1 answers and the slt files on both backends (gpu-suite.sh answers, results); SSB
# SF 20 q3.2, q3.3, q3.4 and q4.3 (domains of 0.4-1.75 M slots) each way, two warm runs
# then 5 EXPLAIN ANALYZE; SSB SF 20 with the defaults (d), the listed chain off (l) and
# both it and the early launch off (x), 15 warm runs x 10 rounds in turns.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
( [ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1 ) &
gen=$!
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped"; done > $OUT/log4-tests.txt 2>&1
cat $OUT/log4-tests.txt
{ echo "== answers (defaults)"; OUT=/tmp/x4 bash $S answers 2>&1 | grep -vE "^(WARNING|ERROR)"
  echo "== results (defaults)"; mkdir -p /tmp/x4r; OUT=/tmp/x4r bash $S results 2>&1 | grep -hE "identical|errors|differ|FAIL"
  echo "== SSB SF1 with TESSERA_EXP_LISTED_CHAIN=0 (lines without a check mark only)"
  TESSERA_EXP_LISTED_CHAIN=0 $X --data-dir /tmp/tdssb1 bench ssb --sf 1 --runs 2 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; } > $OUT/log4-answers.txt 2>&1
cat $OUT/log4-answers.txt
wait $gen
D=/tmp/tdturns20/bench/ssb-sf20
for q in q3.2 q3.3 q3.4 q4.3; do
  query=$(sed '/^--/d' benchmarks/ssb/$q.sql | tr '\n' ' ' | sed 's/;.*//')
  for e in d l; do
    f=/tmp/v.sql; : > $f
    echo "$query;" >> $f; echo "$query;" >> $f
    for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $query;" >> $f; done
    ( [ $e = l ] && export TESSERA_EXP_LISTED_CHAIN=0; $X --format csv --data-dir $D sql $f > /tmp/v-$q-$e.txt 2>&1 )
    echo "== $q $e: $(grep -oE 'GPU kernels: [0-9.]+ ms|rror.*' /tmp/v-$q-$e.txt | tr '\n' ' ')"
    echo "   sort pipeline (the chain): $(grep -E '^pipeline [0-9]+ \[GPU\]: [1-9][0-9]{0,4} rows in' /tmp/v-$q-$e.txt | grep -oE 'kernel [0-9.]+ ms' | paste -sd' ')"
  done
done > $OUT/log4-chains.txt 2>&1
cat $OUT/log4-chains.txt
mkdir -p /tmp/t4
OUT=/tmp/t4 SETTINGS="d l:TESSERA_EXP_LISTED_CHAIN=0 x:TESSERA_EXP_LISTED_CHAIN=0,TESSERA_EXP_EARLY_LAUNCH=0" ROUNDS=10 bash $S turns > $OUT/log4-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log4-turns.txt | tail -22
tar -C /tmp -czf $OUT/run4-json.tgz t4
date -u
