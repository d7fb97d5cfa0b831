#!/usr/bin/env bash
# Run 7 of 2026-11-30: a generated kernel that a fresh compilation leaves using local
# memory (spilled registers) is compiled again under a register cap when first loaded
# (`KernelCache::load`; TESSERA_EXP_SPILL_RETRY=0 keeps the first, as before). GPU unit
# tests (gpu_kernels_that_spill_are_compiled_again among them); SSB and TPC-H SF 1 answers
# checked with the defaults and bit-packed; Nsight Compute on q4.2's bit-packed probe
# both ways; SSB SF 20 d, s0, b8 and b8s0, 15 warm runs x 3 rounds in turns; TPC-H SF 10
# d and s0, 5 warm runs, twice each.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log7-tests.txt
( [ -d /tmp/tdh10/bench/tpch-sf10 ] || $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1 ) &
gen=$!
[ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
P=/tmp/tdturns20/bench/ssb-sf20
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^called|^  left|^ right|spill"; done >> $OUT/log7-tests.txt 2>&1
cat $OUT/log7-tests.txt
{ for b in 0 8; do echo "== SF1 answers checked, TESSERA_EXP_NARROW_BITS=$b (lines without a check mark only)"
  for s in ssb tpch; do TESSERA_EXP_NARROW_BITS=$b $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done; done; } > $OUT/log7-answers.txt 2>&1
cat $OUT/log7-answers.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for e in 1 0; do
  echo "== ncu q4.2 probe, TESSERA_EXP_NARROW_BITS=8 TESSERA_EXP_SPILL_RETRY=$e"
  TESSERA_EXP_NARROW_BITS=8 TESSERA_EXP_SPILL_RETRY=$e $NCU --clock-control none --kernel-name tessera_pipeline --launch-skip 4 --launch-count 1 \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,launch__registers_per_thread,smsp__issue_active.avg.pct_of_peak_sustained_active \
    $X --data-dir $P -c "$(sed '/^--/d' benchmarks/ssb/q4.2.sql)" 2>&1 | grep -vE "^==PROF==|^\s*$|^│|^┌|^└|^╞|^├|^\s*-+\s" | tail -6
done > $OUT/log7-ncu.txt 2>&1
cat $OUT/log7-ncu.txt
wait $gen
mkdir -p /tmp/t7
OUT=/tmp/t7 SETTINGS="d s0:TESSERA_EXP_SPILL_RETRY=0 b8:TESSERA_EXP_NARROW_BITS=8 b8s0:TESSERA_EXP_NARROW_BITS=8,TESSERA_EXP_SPILL_RETRY=0" ROUNDS=3 bash $S turns > $OUT/log7-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log7-turns.txt | tail -20
tar -C /tmp -czf $OUT/run7-json.tgz t7
for e in 1 0 1 0; do
  TESSERA_EXP_SPILL_RETRY=$e $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 5 --engine tessera 2>&1 | grep -E "^│ (q[0-9]+|total)" > /tmp/tp.txt
  echo "== TPC-H SF10 TESSERA_EXP_SPILL_RETRY=$e"; cat /tmp/tp.txt
done > $OUT/log7-tpch.txt 2>&1
grep -E "==|total" $OUT/log7-tpch.txt
date -u
