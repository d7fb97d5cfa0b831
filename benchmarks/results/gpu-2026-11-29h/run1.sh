#!/usr/bin/env bash
# Run 1 of 2026-11-29h: columns of runs (codegen::Narrow::Runs, TESSERA_EXP_NARROW_RUNS).
# GPU unit tests; SSB and TPC-H SF 1 answers checked with runs where they pay (=1), with
# runs wherever values allow (=2) and with runs and bit-packing (=1 with
# TESSERA_EXP_NARROW_BITS=8); SSB SF 20 with the defaults (d) and =1 (r), 15 warm runs x
# 3 rounds in turns; EXPLAIN ANALYZE of every SSB SF 20 query under d and r.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log1-tests.txt
( [ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1 ) &
gen=$!
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^called|^  left|^ right"; done >> $OUT/log1-tests.txt 2>&1
cat $OUT/log1-tests.txt
{ for e in TESSERA_EXP_NARROW_RUNS=1 TESSERA_EXP_NARROW_RUNS=2 "TESSERA_EXP_NARROW_RUNS=1 TESSERA_EXP_NARROW_BITS=8"; do
    echo "== SF1 answers checked under $e (lines without a check mark only)"
    for s in ssb tpch; do env $e $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
  done; } > $OUT/log1-answers.txt 2>&1
cat $OUT/log1-answers.txt
wait $gen
mkdir -p /tmp/t1
OUT=/tmp/t1 SETTINGS="d r:TESSERA_EXP_NARROW_RUNS=1" ROUNDS=3 bash $S turns > $OUT/log1-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log1-turns.txt | tail -20
tar -C /tmp -czf $OUT/run1-json.tgz t1
STORE=/tmp/tdturns20/bench/ssb-sf20 EXPS="- TESSERA_EXP_NARROW_RUNS=1" bash $S exp > $OUT/log1-exp.txt 2>&1
grep -E "==|GPU kernels" $OUT/log1-exp.txt
date -u
