#!/usr/bin/env bash
# Run 8 of 2026-11-29c: the pack of the review (the record kernels' shared block scan and
# shared-memory rank, one helper each for both chains; the column cache's hit, a spare's
# hand-over and a kernel's queueing shared by both launch paths): GPU unit tests
# (gpu_listed_sorted_records_match_a_stable_sort has ~5,000 records past its cap), SSB and
# TPC-H SF 1 answers and the slt files on both backends (gpu-suite.sh answers).
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|listed"; done > $OUT/log8-tests.txt 2>&1
cat $OUT/log8-tests.txt
{ echo "== answers (defaults)"; OUT=/tmp/x8 bash $S answers 2>&1 | grep -vE "^(WARNING|ERROR)"; } > $OUT/log8-answers.txt 2>&1
cat $OUT/log8-answers.txt
date -u
