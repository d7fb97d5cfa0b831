#!/usr/bin/env bash
# Run 7 of 2026-11-29g: run 4's pack. Whether bit-packed columns want more items a
# thread (their words are found once a tile, and SSB's multi-probe kernels take 2 items):
# EXPLAIN ANALYZE of every SSB SF 20 query with TESSERA_EXP_NARROW_BITS=8 and with the
# defaults, each with 0 (per pipeline: 2 for multi-probe kernels) and 4 items a thread,
# twice.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
STORE=/tmp/tdturns20/bench/ssb-sf20 ITEMS="0 4" EXPS="TESSERA_EXP_NARROW_BITS=8 - TESSERA_EXP_NARROW_BITS=8 -" bash $S exp > $OUT/log7-exp.txt 2>&1
grep -E "^==" $OUT/log7-exp.txt
for e in 1 2 3 4 5 6 7 8; do awk -v k=$e '/^==/{n++} n==k && /GPU kernels/ {match($0, /GPU kernels: [0-9.]+/); printf "%s ", substr($0, RSTART+13, RLENGTH-13)} END {print ""}' $OUT/log7-exp.txt; done
date -u
