#!/usr/bin/env bash
# Run 2 of 2026-11-28b: EXPLAIN ANALYZE of all 22 TPC-H SF10 queries with the defaults
# and with bit-packed narrowed columns (TESSERA_EXP_NARROW_BITS=1); `bench` in turns,
# each setting in its own process, the order reversed every other round: SSB SF20 20 warm
# runs x 4 rounds.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
QUERIES="q01 q02 q03 q04 q05 q06 q07 q08 q09 q10 q11 q12 q13 q14 q15 q16 q17 q18 q19 q20 q21 q22" \
EXPS="- TESSERA_EXP_NARROW_BITS=1" bash $S tpchexp > $OUT/log2-tpchexp.txt 2>&1
mkdir -p /tmp/r2
{
for r in 1 2 3 4; do
  order="default bits"; [ $((r % 2)) = 0 ] && order="bits default"
  for e in $order; do
    echo "== SSB SF20, round $r, $e"
    ( [ $e = default ] || export TESSERA_EXP_NARROW_BITS=1
      $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 20 --engine tessera --json /tmp/r2/run2-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ (q|total)" )
  done
done
} > $OUT/log2-bench.txt 2>&1
tar -C /tmp/r2 -czf $OUT/run2-json.tgz .
ls -la $OUT
