#!/usr/bin/env bash
# Run 7 of 2026-11-27 (i) at the commit adding the launch's steps to EXPLAIN ANALYZE:
# EXPLAIN ANALYZE of SSB SF20 (each GPU pipeline's host phases up to its launch), two
# passes; first query in a new process (SSB SF20 q1.1 and q4.3, TPC-H SF10 q01).
S=benchmarks/device/gpu-suite.sh
EXPS="- -" bash $S exp > $OUT/log7-exp.txt 2>&1
bash $S cold > $OUT/log7-cold.txt 2>&1
ls -la $OUT
