#!/usr/bin/env bash
# Run 5 of 2026-11-30c: the committed sort chain (run 1's: a thread's run of seen flags
# loaded 32 at a time, group numbers placed then words gathered a thread a word, ranks in
# batches) with group-key slots divided in 32 bits, and the fold of run 1; new binary (n)
# against the 4cf8d54 one (o). GPU unit tests; SSB and TPC-H SF 1 answers (n); Nsight
# Compute durations of q3.1's chain and fold (3 launches each, both); SSB SF 20 bench,
# 15 warm runs x 4 rounds in turns; TPC-H SF 10, 5 warm runs, n o o n; random queries,
# 8 seeds x 200 s (SEED0=7700).
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
O=/tmp/tessera-gpu/old/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log5-tests.txt
( grep -q lineorder /tmp/tdturns20/bench/ssb-sf20/manifest.json 2>/dev/null || { rm -rf /tmp/tdturns20; $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1; } ) &
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^  left|^ right"; done >> $OUT/log5-tests.txt 2>&1
cat $OUT/log5-tests.txt
wait
ls /tmp/tdturns20/bench/ssb-sf20 | head -3
P=/tmp/tdturns20/bench/ssb-sf20
{ echo "== SF1 answers checked, new binary (lines without a check mark only)"
  for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -12; done; } > $OUT/log5-answers.txt 2>&1
cat $OUT/log5-answers.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
q31="$(sed '/^--/d' benchmarks/ssb/q3.1.sql | tr '\n' ' ' | sed 's/;\s*$//')"
f=/tmp/q31x4.sql; : > $f; for i in 1 2 3 4; do echo "$q31;" >> $f; done
for b in n o; do B=$X; [ $b = o ] && B=$O
  for k in tessera_small_sorted_records tessera_fold_copies; do echo "== $b $k"
    $NCU --clock-control none --kernel-name $k --launch-skip 1 --launch-count 3 --metrics gpu__time_duration.sum,smsp__inst_executed.sum,launch__registers_per_thread \
      $B --data-dir $P sql $f 2>&1 | grep -E "gpu__time|inst_exec|registers"; done; done > $OUT/log5-ncu.txt 2>&1
cat $OUT/log5-ncu.txt
mkdir -p /tmp/t5
OUT=/tmp/t5 BIN_o=$O SETTINGS="n o" ROUNDS=4 bash $S turns > $OUT/log5-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log5-turns.txt | tail -22
( cd /tmp && tar -czf $OUT/run5-json.tgz t5 )
[ -d /tmp/tdh10/bench/tpch-sf10 ] || $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1
for b in n o o n; do B=$X; [ $b = o ] && B=$O
  $B --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 5 --engine tessera 2>&1 | grep -E "^│ (q[0-9]+|total)" > /tmp/tp.txt
  echo "== TPC-H SF10 $b"; cat /tmp/tp.txt
done > $OUT/log5-tpch.txt 2>&1
grep -E "==|total" $OUT/log5-tpch.txt
SEEDS=8 SEED0=7700 NARROW_SEEDS=8 DIFFTEST_SECONDS=200 bash $S difftests > $OUT/log5-difftests.txt 2>&1
grep -vE "^(WARNING|ERROR)" $OUT/log5-difftests.txt | tail -8
date -u
