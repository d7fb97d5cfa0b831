#!/usr/bin/env bash
# Run 10 of 2026-11-28, after the review's refactors (records.cuh's shared placement
# loop, the executor's switches in one struct): GPU unit tests; SSB SF1 and TPC-H SF1
# answers checked; gpu_top and gpu_results slt files on the GPU and the CPU backend.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/log10-check.txt
bash $S tests >> $OUT/log10-check.txt 2>&1
{
echo "== SF1 answers checked (lines without a check mark only)"
for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
mkdir -p /tmp/res10
OUT=/tmp/res10 SLTS="gpu_top gpu_results" bash $S results 2>&1 | grep -E "identical|errors:"
} >> $OUT/log10-check.txt 2>&1
cat $OUT/log10-check.txt | tail -12
