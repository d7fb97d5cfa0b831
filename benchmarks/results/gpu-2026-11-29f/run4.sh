#!/usr/bin/env bash
# Run 4 of 2026-11-29f: the final pack (commit 7fbd7af: narrowed payloads for 64-bit
# columns only by default, TESSERA_EXP_NARROW_PAYLOADS=64; SSB's kernels are then
# those of 0, checked locally). GPU unit tests; SSB and TPC-H SF 1 answers and the slt
# files with the defaults and with every payload narrowed (32); TPC-H SF 10 with 64, 0
# and 32, 5 warm runs each, 2 rounds in turns; `tessera difftest` with 32.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
( [ -d /tmp/tdh10/bench/tpch-sf10 ] || $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1 ) &
gen=$!
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^called|^  left|^ right"; done > $OUT/log4-tests.txt 2>&1
cat $OUT/log4-tests.txt
for n in 64 32; do
  export TESSERA_EXP_NARROW_PAYLOADS=$n
  echo "== answers (TESSERA_EXP_NARROW_PAYLOADS=$n)"; OUT=/tmp/x4-$n bash $S answers 2>&1 | grep -vE "^(WARNING|ERROR)" | grep -E "│ total|identical|differ|rror|FAIL|check"
  echo "== results (TESSERA_EXP_NARROW_PAYLOADS=$n)"; mkdir -p /tmp/x4r-$n; OUT=/tmp/x4r-$n bash $S results 2>&1 | grep -hE "identical|errors|differ|FAIL"
done > $OUT/log4-answers.txt 2>&1
unset TESSERA_EXP_NARROW_PAYLOADS
cat $OUT/log4-answers.txt
wait $gen
H=/tmp/tdh10
for r in 1 2; do
  for n in 64 0 32; do
    echo "== TPC-H SF10 n$n round $r: $(TESSERA_EXP_NARROW_PAYLOADS=$n $X --data-dir $H bench tpch --sf 10 --runs 5 --engine tessera --json $OUT/tpch10-n$n-r$r.json 2>&1 | grep -E '^│ total')"
  done
done > $OUT/log4-tpch.txt 2>&1
cat $OUT/log4-tpch.txt
mkdir -p /tmp/j4; mv $OUT/tpch10-*.json /tmp/j4/; tar -C /tmp -czf $OUT/run4-json.tgz j4
TESSERA_EXP_NARROW_PAYLOADS=32 timeout 420 $X --data-dir /tmp/tdr difftest --require-gpu > /tmp/difftest.txt 2>&1; echo "difftest exit $?" >> /tmp/difftest.txt
{ echo "== mismatch lines: $(grep -c '^MISMATCH' /tmp/difftest.txt)"; grep '^MISMATCH' /tmp/difftest.txt | head; tail -14 /tmp/difftest.txt; } > $OUT/log4-difftest.txt
cat $OUT/log4-difftest.txt
date -u
