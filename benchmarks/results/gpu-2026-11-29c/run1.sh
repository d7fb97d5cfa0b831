#!/usr/bin/env bash
# Run 1 of 2026-11-29c: the pack of the early launch (a warm query's one kernel launched
# at admission, `GpuRuntime::launch_early`; TESSERA_EXP_EARLY_LAUNCH=0 launches it when
# the executor reaches its pipeline, as before). GPU unit tests; SSB and TPC-H SF 1
# answers checked, gpu_repeats.slt and gpu_build_cache.slt on the GPU and the CPU backend
# (gpu-suite.sh answers); the GPU-result slt files (gpu-suite.sh results); a
# TESSERA_TRACE_HOST=1 pass of SSB SF 20 each way; SSB SF 20 early (d) against not (x),
# 15 warm runs x 12 rounds in turns.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
( [ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1 ) &
gen=$!
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped"; done > $OUT/log1-tests.txt 2>&1
cat $OUT/log1-tests.txt
{ echo "== answers (early launch on, the default)"; OUT=/tmp/x1 bash $S answers 2>&1
  echo "== results (early launch on)"; mkdir -p /tmp/x1r; OUT=/tmp/x1r bash $S results 2>&1 | grep -hE "identical|errors|differ|FAIL"; } > $OUT/log1-answers.txt 2>&1
cat $OUT/log1-answers.txt
wait $gen
T=benchmarks/results/gpu-2026-11-27j/trace.py
mkdir -p /tmp/t1
for e in d x; do
  ( [ $e = x ] && export TESSERA_EXP_EARLY_LAUNCH=0
    TESSERA_TRACE_HOST=1 $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 15 --engine tessera 2>&1 | grep "^trace" | gzip > /tmp/t1/log1-trace-$e.txt.gz )
  { echo "== $e"; python3 $T /tmp/t1/log1-trace-$e.txt.gz; python3 $T --phases /tmp/t1/log1-trace-$e.txt.gz; } >> $OUT/log1-trace-table.txt 2>&1
done
grep -E "^== |^sum over" $OUT/log1-trace-table.txt
OUT=/tmp/t1 SETTINGS="d x:TESSERA_EXP_EARLY_LAUNCH=0" ROUNDS=12 bash $S turns > $OUT/log1-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log1-turns.txt | tail -20
tar -C /tmp -czf $OUT/run1-json-traces.tgz t1
date -u
