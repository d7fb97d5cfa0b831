#!/usr/bin/env bash
# Run 5 of 2026-11-27 (i), on run 4's machine: EXPLAIN ANALYZE of SSB SF20 and of all 22
# TPC-H SF10 queries with the default and as before this session; Nsight Compute on
# SSB q1.3's and q3.3's probe with the default; the SSB SF20 kernels' sources.
S=benchmarks/device/gpu-suite.sh
OLD=TESSERA_EXP_SEL_BOOL=1,TESSERA_EXP_WARP_SKIP=0,TESSERA_EXP_EARLY_PROBES=0
EXPS="- $OLD" bash $S exp > $OUT/log5-exp.txt 2>&1
EXPS="- $OLD" QUERIES="$(cd benchmarks/tpch && ls q*.sql | sed 's/.sql//' | tr '\n' ' ')" bash $S tpchexp > $OUT/log5-tpchexp.txt 2>&1
SOURCE="q1.3:1 q3.3:3" bash $S source > $OUT/log5-source.txt 2>&1
tar -C $OUT -czf $OUT/run5-ncu.tgz ncu && rm -rf $OUT/ncu
bash $S dump > $OUT/log5-dump.txt 2>&1 && tar -C $OUT -czf $OUT/run5-kernels.tgz kernels && rm -rf $OUT/kernels
ls -la $OUT
