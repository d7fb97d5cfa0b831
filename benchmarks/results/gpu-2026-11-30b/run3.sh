#!/usr/bin/env bash
# Run 3 of 2026-11-30b: random queries (tessera difftest: GPU against the CPU backend and
# plain DataFusion) with seeds no session ran before (SEED0=7300), 8 at once, batches
# within 420 s: 2 seeds a batch with packed columns, 3 byte-narrowed (the default), 3 at
# their widths; on the code of 6da3898.
S=benchmarks/device/gpu-suite.sh
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } > $OUT/log3-difftests.txt
SEEDS=8 SEED0=7300 PACKED_SEEDS=2 NARROW_SEEDS=3 DIFFTEST_SECONDS=200 BATCH_SECONDS=200 DIFFTEST_BUDGET=420 bash $S difftests >> $OUT/log3-difftests.txt 2>&1
grep -vE "^(WARNING|ERROR)" $OUT/log3-difftests.txt | tail -30
