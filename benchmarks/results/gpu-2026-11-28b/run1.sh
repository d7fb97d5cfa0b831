#!/usr/bin/env bash
# Run 1 of 2026-11-28b: GPU unit tests (the new bit-packed loads among them); EXPLAIN
# ANALYZE of SSB SF20 with the defaults (columns narrowed to byte widths) and with
# bit-packed narrowed columns (TESSERA_EXP_NARROW_BITS=1), the default first and last;
# SSB SF1 and TPC-H SF1 answers checked both ways.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/log1-tests.txt
bash $S tests >> $OUT/log1-tests.txt 2>&1
EXPS="- TESSERA_EXP_NARROW_BITS=1 -" bash $S exp > $OUT/log1-exp.txt 2>&1
{
for e in TESSERA_EXP_NARROW_BITS=1 TESSERA_EXP_NARROW_BITS=0; do
  echo "== SF1 answers checked under $e (lines without a check mark only)"
  for s in ssb tpch; do env $e $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
done
} > $OUT/log1-sf1.txt 2>&1
ls -la $OUT
