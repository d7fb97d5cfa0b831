#!/usr/bin/env bash
# Run 1 of 2026-11-28c: the pack of eb39dfc (records.cuh's tessera_block_sum, compiled
# but not yet run on a GPU): GPU unit tests; SSB SF1 and TPC-H SF1 answers checked; the
# ten GPU-result slt files on the GPU and the CPU backend (gpu_top's sorts and LIMITs use
# the compaction that now sums through tessera_block_sum).
S=benchmarks/device/gpu-suite.sh
bash $S tests > $OUT/log1-tests.txt 2>&1
tail -4 $OUT/log1-tests.txt
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{
echo "== SF1 answers checked, defaults (lines without a check mark only)"
for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
} > $OUT/log1-sf1.txt 2>&1
cat $OUT/log1-sf1.txt
mkdir -p /tmp/x1
OUT=/tmp/x1 bash $S results > $OUT/log1-results.txt 2>&1
grep -hE "identical|errors" $OUT/log1-results.txt
