#!/usr/bin/env bash
# Run 1 of 2026-11-29b (the pack of the working tree before 4d14b7d: its result columns,
# manifest read, sink fields and launch study, not yet its subqueries or shared placement
# maps): checks and host traces of the lean result columns
# (crate::group_columns; TESSERA_EXP_LEAN_RESULTS=0 is the old way) and of one manifest
# read a warm statement. GPU unit tests; `tessera bench launches` with its new
# copies-back columns; SSB and TPC-H SF 1 answers checked both ways; `tessera difftest`
# (random queries, GPU against the CPU backend and DataFusion); a TESSERA_TRACE_HOST=1
# pass of SSB SF 20 each way (15 warm runs), tables by gpu-2026-11-27j/trace.py.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
( [ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1 ) &
gen=$!
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped"; done > $OUT/log1-tests.txt 2>&1
cat $OUT/log1-tests.txt
$X bench launches > $OUT/log1-launches.txt 2>&1
cat $OUT/log1-launches.txt
for mode in default TESSERA_EXP_LEAN_RESULTS=0; do
  echo "== SSB SF1 and TPC-H SF1, $mode (answers checked; lines without a check mark only)"
  ( [ $mode = default ] || export $mode
    for suite in ssb tpch; do $X --data-dir /tmp/td${suite}1 bench $suite --sf 1 --runs 2 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done )
done > $OUT/log1-answers.txt 2>&1
cat $OUT/log1-answers.txt
echo "== difftest (default seeds)" > $OUT/log1-difftest.txt
timeout 200 $X --data-dir /tmp/tdr difftest --require-gpu 2>&1 | tail -12 >> $OUT/log1-difftest.txt
cat $OUT/log1-difftest.txt
wait $gen
T=benchmarks/results/gpu-2026-11-27j/trace.py
for e in d x; do
  ( [ $e = x ] && export TESSERA_EXP_LEAN_RESULTS=0
    TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera 2>&1 | grep "^trace" | gzip > /tmp/log1-trace-$e.txt.gz )
  { echo "== $e"; python3 $T /tmp/log1-trace-$e.txt.gz; python3 $T --phases /tmp/log1-trace-$e.txt.gz; } >> $OUT/log1-trace-table.txt 2>&1
done
grep -E "^== |^sum over" $OUT/log1-trace-table.txt
tar -C /tmp -czf $OUT/run1-traces.tgz log1-trace-d.txt.gz log1-trace-x.txt.gz
ls -la $OUT; date -u
