#!/usr/bin/env bash
# Run 1 of 2026-11-29g: the pack whose bit-packed narrowed columns (Narrow::Bits) are
# lane-interleaved (a kernel thread's items are consecutive values of its own word
# stream, taken out by constant shifts, no shuffles). GPU unit tests; SSB and TPC-H SF 1
# answers with every column that allows it bit-packed (TESSERA_EXP_NARROW_BITS=8); SSB
# SF 20 with the defaults (d), =8 (b8) and =32 (b32), 15 warm runs x 4 rounds in turns.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log1-tests.txt
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^called|^  left|^ right"; done >> $OUT/log1-tests.txt 2>&1
cat $OUT/log1-tests.txt
( [ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1 ) &
gen=$!
{ for e in TESSERA_EXP_NARROW_BITS=8; do
    echo "== SF1 answers checked under $e (lines without a check mark only)"
    for s in ssb tpch; do env $e $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
  done; } > $OUT/log1-answers.txt 2>&1
cat $OUT/log1-answers.txt
wait $gen
mkdir -p /tmp/t1
OUT=/tmp/t1 SETTINGS="d b8:TESSERA_EXP_NARROW_BITS=8 b32:TESSERA_EXP_NARROW_BITS=32" ROUNDS=4 bash $S turns > $OUT/log1-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log1-turns.txt | tail -24
tar -C /tmp -czf $OUT/run1-json.tgz t1
date -u
