#!/usr/bin/env bash
# Run 2 of 2026-11-27 (g): EXPLAIN ANALYZE of SSB SF20 plain and narrowed, with the
# per-pipeline tile shape and with 8 and 16 items a thread (narrowed loads move fewer
# bytes each: more of them in flight); then random queries (difftests) past seed 1905.
S=benchmarks/device/gpu-suite.sh
export STORE=/tmp/td20/bench/ssb-sf20
EXPS="- TESSERA_EXP_NARROW=1" ITEMS="0 8 16" bash $S exp > $OUT/log2-exp.txt 2>&1
SEEDS=14 SEED0=1905 DIFFTEST_SECONDS=170 PACKED_SEEDS=2 NARROW_SEEDS=2 bash $S difftests > $OUT/log2-difftests.txt 2>&1
ls -la $OUT
