#!/usr/bin/env bash
# Run 9 of 2026-11-28b, the defaults at the final code (pack of 511135f, as run 8): SSB
# SF1 and TPC-H SF1 answers checked; the ten GPU-result slt files on the GPU and the CPU
# backend, answers compared; the same with TESSERA_EXP_NARROW_BITS=8.
S=benchmarks/device/gpu-suite.sh
mkdir -p /tmp/x9 /tmp/x9b
X=/tmp/tessera-gpu/bin/tessera
{
echo "== SF1 answers checked, defaults (lines without a check mark only)"
for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
} > $OUT/log9-sf1.txt 2>&1
OUT=/tmp/x9 bash $S results > $OUT/log9-results.txt 2>&1
TESSERA_EXP_NARROW_BITS=8 OUT=/tmp/x9b bash $S results > $OUT/log9-results-bits.txt 2>&1
grep -hE "identical|errors" $OUT/log9-results*.txt
