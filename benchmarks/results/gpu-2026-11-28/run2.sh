#!/usr/bin/env bash
# Run 2 of 2026-11-28, right after run 1 on its machine: EXPLAIN ANALYZE of all 22 TPC-H
# SF10 queries, per GPU pipeline, with the defaults and under each new switch.
S=benchmarks/device/gpu-suite.sh
QUERIES="q01 q02 q03 q04 q05 q06 q07 q08 q09 q10 q11 q12 q13 q14 q15 q16 q17 q18 q19 q20 q21 q22" \
EXPS="- TESSERA_EXP_COLUMN_LOADS=1 TESSERA_EXP_COLUMN_LOADS=2 TESSERA_EXP_COLUMN_LOADS=3 TESSERA_EXP_LEAN_ITEMS=8 -" bash $S tpchexp > $OUT/log2-tpchexp.txt 2>&1
ls -la $OUT
