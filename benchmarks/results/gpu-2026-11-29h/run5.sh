#!/usr/bin/env bash
# Run 5 of 2026-11-29h: the pack after the i64::MIN change (a range's smallest value taken
# off in unsigned arithmetic in group keys' offsets and dense slots: every grouped kernel's
# text changed). GPU unit tests; SSB and TPC-H SF 1 answers with the defaults; SSB SF 20
# with the defaults, 15 warm runs x 3 rounds; TPC-H SF 10, 5 warm runs, twice.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log5-tests.txt
( [ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1 ) &
gen=$!
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^called|^  left|^ right"; done >> $OUT/log5-tests.txt 2>&1
cat $OUT/log5-tests.txt
{ echo "== SF1 answers checked with the defaults (lines without a check mark only)"
  for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done; } > $OUT/log5-answers.txt 2>&1
cat $OUT/log5-answers.txt
wait $gen
mkdir -p /tmp/t5
OUT=/tmp/t5 SETTINGS="d" ROUNDS=3 bash $S turns > $OUT/log5-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log5-turns.txt | tail -20
tar -C /tmp -czf $OUT/run5-json.tgz t5
[ -d /tmp/tdh10/bench/tpch-sf10 ] || $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1
for e in d d; do
  $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 5 --engine tessera --json $OUT/tpch10-run5-$RANDOM.json 2>&1 | grep -E "^│ (q[0-9]+|total)" > /tmp/tp.txt
  echo "== TPC-H SF10 $e"; cat /tmp/tp.txt
done > $OUT/log5-tpch.txt 2>&1
grep -E "==|total" $OUT/log5-tpch.txt
date -u
