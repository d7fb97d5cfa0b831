#!/usr/bin/env bash
# Run 9 of 2026-11-30: the final code (f893ffd: the spill retry keeps the first
# compilation where a capped one fails). GPU unit tests; SSB and TPC-H SF 1 answers
# checked with the defaults.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log9-tests.txt
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^called|^  left|^ right|spill"; done >> $OUT/log9-tests.txt 2>&1
cat $OUT/log9-tests.txt
{ echo "== SF1 answers checked with the defaults (lines without a check mark only)"
  for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done; } > $OUT/log9-answers.txt 2>&1
cat $OUT/log9-answers.txt
date -u
