#!/usr/bin/env bash
# Run 1 of 2026-11-27 (g): GPU unit tests; default against narrowed columns (SSB SF20,
# TPC-H SF10, two rounds, SF1 answers checked); packed SSB SF20 / TPC-H SF10 and SF1
# answers; Nsight Compute per-SASS-instruction tables of SSB q1.1's probe kernel plain,
# narrowed and packed. Run from the project root on the device with carry [".gpu"].
S=benchmarks/device/gpu-suite.sh
bash $S tests > $OUT/log1-tests.txt 2>&1
AB=TESSERA_EXP_NARROW=1 ROUNDS=2 bash $S ab > $OUT/log1-ab-narrow.txt 2>&1
X=/tmp/tessera-gpu/bin/tessera
{
  echo "== SSB SF20 packed"
  TESSERA_EXP_PACKED=1 $X --data-dir /tmp/tdssb20 bench ssb --sf 20 --runs 5 --engine tessera --json $OUT/ssb20-packed.json 2>&1 | grep -v '^\s*$'
  echo "== TPC-H SF10 packed"
  TESSERA_EXP_PACKED=1 $X --data-dir /tmp/tdtpch10 bench tpch --sf 10 --runs 3 --engine tessera 2>&1 | grep -E "^│ total"
  echo "== SF1 packed (answers checked)"
  for s in ssb tpch; do TESSERA_EXP_PACKED=1 $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 2 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
} > $OUT/log1-packed.txt 2>&1
ln -sfn /tmp/tdssb20/bench/ssb-sf20 /tmp/tdp
for mode in plain narrow packed; do
  ( [ $mode = narrow ] && export TESSERA_EXP_NARROW=1; [ $mode = packed ] && export TESSERA_EXP_PACKED=1
    SOURCE="q1.1:1" bash $S source > $OUT/log1-source-$mode.txt 2>&1 )
  mv $OUT/ncu $OUT/ncu-$mode 2>/dev/null; rm -f $OUT/ncu-$mode/*.ncu-rep
done
tar czf $OUT/run1-sass.tgz -C $OUT ncu-plain ncu-narrow ncu-packed && rm -rf $OUT/ncu-*
ls -la $OUT
