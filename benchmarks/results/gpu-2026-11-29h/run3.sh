#!/usr/bin/env bash
# Run 3 of 2026-11-29h: columns of runs (codegen::Narrow::Runs, TESSERA_EXP_NARROW_RUNS)
# read up front pipelined two tiles deep: a tile's values from directory words loaded an
# iteration before. Run 1 read them a row alone in the prefetch (the directory load stalled every tile).
# Also Nsight Compute on q1.1's and q3.1's probes under both.
# GPU unit tests; SSB and TPC-H SF 1 answers checked with runs where they pay (=1), with
# runs wherever values allow (=2) and with runs and bit-packing (=1 with
# TESSERA_EXP_NARROW_BITS=8); SSB SF 20 with the defaults (d) and =1 (r), 15 warm runs x
# 4 rounds in turns; EXPLAIN ANALYZE of every SSB SF 20 query under d and r.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log3-tests.txt
( [ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1 ) &
gen=$!
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^called|^  left|^ right"; done >> $OUT/log3-tests.txt 2>&1
cat $OUT/log3-tests.txt
{ for e in TESSERA_EXP_NARROW_RUNS=1 TESSERA_EXP_NARROW_RUNS=2 "TESSERA_EXP_NARROW_RUNS=1 TESSERA_EXP_NARROW_BITS=8"; do
    echo "== SF1 answers checked under $e (lines without a check mark only)"
    for s in ssb tpch; do env $e $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
  done; } > $OUT/log3-answers.txt 2>&1
cat $OUT/log3-answers.txt
wait $gen
mkdir -p /tmp/t3
OUT=/tmp/t3 SETTINGS="d r:TESSERA_EXP_NARROW_RUNS=1" ROUNDS=4 bash $S turns > $OUT/log3-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log3-turns.txt | tail -20
tar -C /tmp -czf $OUT/run3-json.tgz t1
STORE=/tmp/tdturns20/bench/ssb-sf20 EXPS="- TESSERA_EXP_NARROW_RUNS=1" bash $S exp > $OUT/log3-exp.txt 2>&1
grep -E "==|GPU kernels" $OUT/log3-exp.txt
date -u
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
P=/tmp/tdturns20/bench/ssb-sf20
for qs in q1.1:1 q3.1:3; do
  q=${qs%:*}; skip=${qs#*:}
  for e in TESSERA_EXP_NARROW_RUNS=0 TESSERA_EXP_NARROW_RUNS=1; do
    echo "== ncu $q probe, $e"
    env $e $NCU --clock-control none --kernel-name tessera_pipeline --launch-skip $skip --launch-count 1 \
      --metrics gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,smsp__cycles_active.avg \
      $X --data-dir $P -c "$(sed '/^--/d' benchmarks/ssb/$q.sql)" 2>&1 | grep -vE "^==PROF==|^\s*$|^│|^┌|^└|^╞|^├|^\s*-+\s" | tail -8
  done
done > $OUT/log3-ncu.txt 2>&1
cat $OUT/log3-ncu.txt
date -u
