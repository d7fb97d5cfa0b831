#!/usr/bin/env bash
# Run 6 of 2026-11-27 (i), on run 4's machine: random queries, seeds 1964-1973 (one
# packed, seven narrowed, two plain), each stopped after 150 s.
S=benchmarks/device/gpu-suite.sh
SEEDS=10 SEED0=1963 DIFFTEST_SECONDS=150 PACKED_SEEDS=1 NARROW_SEEDS=7 bash $S difftests > $OUT/log6-difftests.txt 2>&1
ls -la $OUT
