#!/usr/bin/env bash
# Run 12 of 2026-11-27 (j) at ad25675, right after run 11: random queries (GPU against
# the CPU backend and DataFusion), seeds 1982-1989, each stopped after 150 s.
S=benchmarks/device/gpu-suite.sh
SEEDS=8 SEED0=1981 PACKED_SEEDS=1 NARROW_SEEDS=5 DIFFTEST_SECONDS=150 bash $S difftests > $OUT/log12-difftests.txt 2>&1
ls -la $OUT
