#!/usr/bin/env bash
# Run 6 of 2026-11-28b: random queries (difftest: GPU against the CPU backend and
# DataFusion) with bit-packed narrowed columns (TESSERA_EXP_NARROW_BITS=8), seeds 1998-2005
# past the default; then SSB SF100: the GPU column cache after all 13 queries in one
# process, plain (TESSERA_EXP_NARROW=0), narrowed (the default), bit-packed
# (TESSERA_EXP_NARROW_BITS=8 and =32), and packed tiles (TESSERA_EXP_PACKED=1).
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
TESSERA_EXP_NARROW_BITS=8 SEEDS=8 SEED0=1997 NARROW_SEEDS=8 DIFFTEST_SECONDS=170 bash $S difftests > $OUT/log6-difftests.txt 2>&1
rm -rf /tmp/tdr* /tmp/tdp /tmp/tdh10
{
[ -d /tmp/td100/bench/ssb-sf100 ] || /usr/bin/time -f "gen+load %e s" $X --data-dir /tmp/td100/bench/ssb-sf100 gen ssb --sf 100 --load 2>&1 | tail -2
f=/tmp/ssb100.sql; : > $f
for q in benchmarks/ssb/q*.sql; do sed '/^--/d' $q >> $f; done
echo "EXPLAIN ANALYZE $(sed '/^--/d' benchmarks/ssb/q4.3.sql)" >> $f
for e in TESSERA_EXP_NARROW=0 TESSERA_EXP_NARROW=1 TESSERA_EXP_NARROW_BITS=32 TESSERA_EXP_NARROW_BITS=8 TESSERA_EXP_PACKED=1; do
  env $e $X --format csv --data-dir /tmp/td100/bench/ssb-sf100 sql $f 2>&1 | grep -oE "GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB in [0-9]+ columns|rror.*" | paste -sd' ' | sed "s/^/$e: /"
done
} > $OUT/log6-ssb100.txt 2>&1
ls -la $OUT
