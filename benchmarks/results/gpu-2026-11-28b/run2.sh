#!/usr/bin/env bash
# Run 2 of 2026-11-28b, after bit-packing was extended to 32-bit columns without a byte
# form and given a threshold (TESSERA_EXP_NARROW_BITS=N: columns whose replaced form has
# at least N bits): GPU unit tests; EXPLAIN ANALYZE of SSB SF20 with the defaults, N=8
# (every column that qualifies) and N=32 (only those that would take 4 bytes), the default
# first and last; TPC-H SF10's 22 queries the same three ways; SSB SF1 and TPC-H SF1
# answers checked under N=8 and N=32.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/log2-tests.txt
bash $S tests >> $OUT/log2-tests.txt 2>&1
EXPS="- TESSERA_EXP_NARROW_BITS=8 TESSERA_EXP_NARROW_BITS=32 -" bash $S exp > $OUT/log2-exp.txt 2>&1
{
for e in TESSERA_EXP_NARROW_BITS=8 TESSERA_EXP_NARROW_BITS=32; do
  echo "== SF1 answers checked under $e (lines without a check mark only)"
  for s in ssb tpch; do env $e $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
done
} > $OUT/log2-sf1.txt 2>&1
QUERIES="q01 q02 q03 q04 q05 q06 q07 q08 q09 q10 q11 q12 q13 q14 q15 q16 q17 q18 q19 q20 q21 q22" \
EXPS="- TESSERA_EXP_NARROW_BITS=8 TESSERA_EXP_NARROW_BITS=32" bash $S tpchexp > $OUT/log2-tpchexp.txt 2>&1
ls -la $OUT
