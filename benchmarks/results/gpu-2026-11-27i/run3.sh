#!/usr/bin/env bash
# Run 3 of 2026-11-27 (i), on run 1's machine: the SSB SF20 kernels' sources (default);
# random queries, seeds 1956-1963 (one packed, five narrowed, two plain).
S=benchmarks/device/gpu-suite.sh
bash $S dump > $OUT/log3-dump.txt 2>&1 && tar -C $OUT -czf $OUT/run3-kernels.tgz kernels && rm -rf $OUT/kernels
SEEDS=8 SEED0=1955 DIFFTEST_SECONDS=120 PACKED_SEEDS=1 NARROW_SEEDS=5 bash $S difftests > $OUT/log3-difftests.txt 2>&1
ls -la $OUT
