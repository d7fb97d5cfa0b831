#!/usr/bin/env bash
# Run 2 of 2026-11-29b (the pack of 4d14b7d and the bench's rows rendered once: run 1's
# code, and Pipeline::subqueries without cloning the pipeline, placement maps shared with
# each run): GPU unit tests; SSB and TPC-H SF 1 answers checked (TPC-H's scalar
# subqueries among them); `tessera difftest`; a TESSERA_TRACE_HOST=1 pass of SSB SF 20
# with the defaults (d), without the lean result columns (x,
# TESSERA_EXP_LEAN_RESULTS=0), and with the bench rendering each run's rows as text
# after it (r, TESSERA_EXP_ROWS_EACH_RUN=1, as before), 15 warm runs each, tables by
# gpu-2026-11-27j/trace.py.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
( [ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1 ) &
gen=$!
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped"; done > $OUT/log2-tests.txt 2>&1
cat $OUT/log2-tests.txt
for suite in ssb tpch; do $X --data-dir /tmp/td${suite}1 bench $suite --sf 1 --runs 2 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done > $OUT/log2-answers.txt 2>&1
cat $OUT/log2-answers.txt
timeout 200 $X --data-dir /tmp/tdr difftest --require-gpu 2>&1 | tail -12 > $OUT/log2-difftest.txt
cat $OUT/log2-difftest.txt
wait $gen
T=benchmarks/results/gpu-2026-11-27j/trace.py
for e in d x r; do
  ( [ $e = x ] && export TESSERA_EXP_LEAN_RESULTS=0
    [ $e = r ] && export TESSERA_EXP_ROWS_EACH_RUN=1
    TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera 2>&1 | grep "^trace" | gzip > /tmp/log2-trace-$e.txt.gz )
  { echo "== $e"; python3 $T /tmp/log2-trace-$e.txt.gz; python3 $T --phases /tmp/log2-trace-$e.txt.gz; } >> $OUT/log2-trace-table.txt 2>&1
done
grep -E "^== |^sum over" $OUT/log2-trace-table.txt
tar -C /tmp -czf $OUT/run2-traces.tgz log2-trace-d.txt.gz log2-trace-x.txt.gz log2-trace-r.txt.gz
date -u
