#!/usr/bin/env bash
# Run 6 of 2026-11-29d: the pack of the review commit (the chains' device tests share one
# record check; fetch_groups and fold_copies list the group arrays with one function,
# fold_copies on the query's stream). GPU unit tests; SSB and TPC-H SF 1 answers and the
# repeat and build-cache slt files with 8 copies forced.
S=benchmarks/device/gpu-suite.sh
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped"; done > $OUT/log6-tests.txt 2>&1
cat $OUT/log6-tests.txt
{ echo "== answers (TESSERA_EXP_GLOBAL_COPIES=8)"; TESSERA_EXP_GLOBAL_COPIES=8 OUT=/tmp/x6 bash $S answers 2>&1 | grep -vE "^(WARNING|ERROR)"; } > $OUT/log6-answers.txt 2>&1
cat $OUT/log6-answers.txt
date -u
