#!/usr/bin/env bash
# Run 2 of 2026-11-27 (i), on run 1's machine: EXPLAIN ANALYZE of SSB SF20 and of all 22
# TPC-H SF10 queries with the default and with neither change; Nsight Compute on SSB
# q1.2's and q1.3's probe both ways.
S=benchmarks/device/gpu-suite.sh
OLD=TESSERA_EXP_EARLY_PROBES=0,TESSERA_EXP_ONE_EAGER=0
EXPS="- $OLD" bash $S exp > $OUT/log2-exp.txt 2>&1
EXPS="- $OLD" QUERIES="$(cd benchmarks/tpch && ls q*.sql | sed 's/.sql//' | tr '\n' ' ')" bash $S tpchexp > $OUT/log2-tpchexp.txt 2>&1
SOURCE="q1.2:1 q1.3:1" bash $S source > $OUT/log2-source-new.txt 2>&1
mv $OUT/ncu $OUT/ncu-new
( export TESSERA_EXP_EARLY_PROBES=0 TESSERA_EXP_ONE_EAGER=0; SOURCE="q1.2:1 q1.3:1" bash $S source > $OUT/log2-source-old.txt 2>&1 )
mv $OUT/ncu $OUT/ncu-old
tar -C $OUT -czf $OUT/run2-ncu.tgz ncu-new ncu-old && rm -rf $OUT/ncu-new $OUT/ncu-old
ls -la $OUT
