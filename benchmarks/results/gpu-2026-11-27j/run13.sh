#!/usr/bin/env bash
# Run 13 of 2026-11-27 (j) at ad25675: Nsight Compute's per-instruction stall samples of
# the two probe kernels still over 1.3x their model, SSB SF20 q1.1 and q3.1, for the next
# session (reports and SASS CSV in run13-ncu.tgz).
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || bash $S tests > /dev/null 2>&1
[ -d /tmp/td20/bench/ssb-sf20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera > /dev/null 2>&1
SOURCE="q1.1:1 q3.1:3" bash $S source > $OUT/log13-source.txt 2>&1
tar -C $OUT -czf $OUT/run13-ncu.tgz ncu && rm -rf $OUT/ncu
ls -la $OUT
