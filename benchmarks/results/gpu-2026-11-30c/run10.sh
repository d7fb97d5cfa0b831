#!/usr/bin/env bash
# Run 10 of 2026-11-30c: merged sinks as the default (Experiments::merge_sink), against
# TESSERA_EXP_MERGE_SINK=0 (a): GPU unit tests; SSB and TPC-H SF 1 answers with the
# default; random queries with the default, 8 seeds x 200 s (SEED0=7900); SSB SF 20 bench,
# 15 warm runs x 2 rounds in turns.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log10-tests.txt
( grep -q lineorder /tmp/tdturns20/bench/ssb-sf20/manifest.json 2>/dev/null || { rm -rf /tmp/tdturns20; $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1; } ) &
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^  left|^ right"; done >> $OUT/log10-tests.txt 2>&1
cat $OUT/log10-tests.txt
{ echo "== SF1 answers checked, defaults (lines without a check mark only)"
  for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -12; done; } > $OUT/log10-answers.txt 2>&1
cat $OUT/log10-answers.txt
wait
SEEDS=8 SEED0=7900 NARROW_SEEDS=8 DIFFTEST_SECONDS=200 bash $S difftests > $OUT/log10-difftests.txt 2>&1
grep -vE "^(WARNING|ERROR)" $OUT/log10-difftests.txt | tail -6
mkdir -p /tmp/t10
OUT=/tmp/t10 SETTINGS="d a:TESSERA_EXP_MERGE_SINK=0" ROUNDS=2 bash $S turns > $OUT/log10-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log10-turns.txt | tail -18
( cd /tmp && tar -czf $OUT/run10-json.tgz t10 )
date -u
