#!/usr/bin/env bash
# Run 5 of 2026-11-28b, after each bit-packed load up front took its tile's first word from the kernel (computed once a tile)
# and was predicated: GPU unit tests; EXPLAIN ANALYZE
# of SSB SF20 with the defaults, TESSERA_EXP_NARROW_BITS=32 and =8, the default first and
# last; Nsight Compute on q1.1's and q2.1's probe kernels with the defaults and =32; SSB
# SF1 and TPC-H SF1 answers checked under =8 and =32.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/log5-tests.txt
bash $S tests >> $OUT/log5-tests.txt 2>&1
EXPS="- TESSERA_EXP_NARROW_BITS=32 TESSERA_EXP_NARROW_BITS=8 -" bash $S exp > $OUT/log5-exp.txt 2>&1
{
for e in TESSERA_EXP_NARROW_BITS=8 TESSERA_EXP_NARROW_BITS=32; do
  echo "== SF1 answers checked under $e (lines without a check mark only)"
  for s in ssb tpch; do env $e $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
done
} > $OUT/log5-sf1.txt 2>&1
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
P=/tmp/td20/bench/ssb-sf20
for qs in q1.1:1 q2.1:3; do
  q=${qs%:*}; skip=${qs#*:}
  for e in TESSERA_EXP_NARROW_BITS=0 TESSERA_EXP_NARROW_BITS=32; do
    echo "== ncu $q probe, $e"
    env $e $NCU --clock-control none --kernel-name tessera_pipeline --launch-skip $skip --launch-count 1 \
      --metrics gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread \
      $X --data-dir $P -c "$(sed '/^--/d' benchmarks/ssb/$q.sql)" 2>&1 | grep -vE "^==PROF==|^\s*$|^│|^┌|^└|^╞|^├|^\s*-+\s" | tail -8
  done
done > $OUT/log5-ncu.txt 2>&1
ls -la $OUT
