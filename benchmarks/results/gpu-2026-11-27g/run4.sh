#!/usr/bin/env bash
# Run 4 of 2026-11-27 (g): packed columns (TESSERA_EXP_PACKED=1) with the per-pipeline
# tile shape and with 4 items a thread everywhere (multi-probe kernels take 2 by
# default), and with the next tile's copies issued late (TESSERA_EXP_STAGE_LATE=1):
# SSB SF20 EXPLAIN ANALYZE per setting.
S=benchmarks/device/gpu-suite.sh
export STORE=/tmp/td20/bench/ssb-sf20
EXPS="TESSERA_EXP_PACKED=1 TESSERA_EXP_PACKED=1,TESSERA_EXP_STAGE_LATE=1 -" ITEMS="0 4" bash $S exp > $OUT/log4-exp.txt 2>&1
ls -la $OUT
