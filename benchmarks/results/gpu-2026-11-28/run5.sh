#!/usr/bin/env bash
# Run 5 of 2026-11-28, right after run 4: random queries (GPU against the CPU backend and
# DataFusion), seeds 1990-1997, each stopped after 150 s.
S=benchmarks/device/gpu-suite.sh
SEEDS=8 SEED0=1989 PACKED_SEEDS=1 NARROW_SEEDS=5 DIFFTEST_SECONDS=150 bash $S difftests > $OUT/log5-difftests.txt 2>&1
mv $OUT/difftests.tgz $OUT/difftests-run5.tgz
ls -la $OUT
