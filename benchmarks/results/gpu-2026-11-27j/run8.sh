#!/usr/bin/env bash
# Run 8 of 2026-11-27 (j) at 4bb7695: EXPLAIN ANALYZE of TPC-H SF10 q03, q07, q08 and q13
# (each GPU pipeline's host phases, the many-groups placement rule on and off), whose
# waits ran 2-3 ms past their kernels in run 7's trace.
S=benchmarks/device/gpu-suite.sh
QUERIES="q03 q07 q08 q13" bash $S phases > $OUT/log8-phases.txt 2>&1
ls -la $OUT
