#!/usr/bin/env bash
# Run 9 of 2026-11-27 (j) at 4bb7695: EXPLAIN ANALYZE of SSB SF20 with 2 (the default for
# pipelines with two or more probes), 3 and 4 items a thread, and the eager-load
# threshold at 0.05 and 0.25 besides its 0.1: the sweeps behind both defaults predate
# int selection flags, warp votes and narrowed word loads.
S=benchmarks/device/gpu-suite.sh
ITEMS="0 3 4" EXPS="- TESSERA_EXP_EAGER_SECTORS=0.05 TESSERA_EXP_EAGER_SECTORS=0.25" bash $S exp > $OUT/log9-exp.txt 2>&1
ls -la $OUT
