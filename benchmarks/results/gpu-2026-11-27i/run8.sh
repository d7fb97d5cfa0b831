#!/usr/bin/env bash
# Run 8 of 2026-11-27 (i) at the final code: EXPLAIN ANALYZE of SSB SF20 with the items a
# thread chosen per pipeline (0) and with 4 and 8 for every pipeline, then once more with
# the default: where more rows a thread would pay now that warps skip.
S=benchmarks/device/gpu-suite.sh
ITEMS="0 4 8 0" EXPS="-" bash $S exp > $OUT/log8-exp-items.txt 2>&1
ls -la $OUT
