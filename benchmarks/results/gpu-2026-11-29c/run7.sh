#!/usr/bin/env bash
# Run 7 of 2026-11-29c: the pack of the listed chain whose records past the shared
# memory's cap are written by every block (block 0 alone did in runs 4-6): GPU unit tests
# (gpu_listed_sorted_records_match_a_stable_sort has ~5,000 records past its cap), SSB and
# TPC-H SF 1 answers and the slt files on both backends (gpu-suite.sh answers).
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|listed"; done > $OUT/log7-tests.txt 2>&1
cat $OUT/log7-tests.txt
{ echo "== answers (defaults)"; OUT=/tmp/x7 bash $S answers 2>&1 | grep -vE "^(WARNING|ERROR)"; } > $OUT/log7-answers.txt 2>&1
cat $OUT/log7-answers.txt
date -u
