#!/usr/bin/env bash
# Run 2 of 2026-11-27 (h), on run 1's machine: SF1 answers checked narrowed with word
# loads; EXPLAIN ANALYZE of SSB SF20 narrowed with and without word loads (per-pipeline
# tile shape, and 8 items a thread with word loads); Nsight Compute per-SASS tables of
# q1.1's probe kernel narrowed with word loads; random queries, half narrowed with
# word loads.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
{
echo "== SF1 answers checked, narrowed with word loads"
( export TESSERA_EXP_NARROW=1 TESSERA_EXP_NARROW_WORDS=1
  for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 2 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done )
} > $OUT/log2-sf1.txt 2>&1
export STORE=/tmp/td20/bench/ssb-sf20
EXPS="TESSERA_EXP_NARROW=1 TESSERA_EXP_NARROW=1,TESSERA_EXP_NARROW_WORDS=1 -" ITEMS="0" bash $S exp > $OUT/log2-exp.txt 2>&1
EXPS="TESSERA_EXP_NARROW=1,TESSERA_EXP_NARROW_WORDS=1" ITEMS="8" bash $S exp >> $OUT/log2-exp.txt 2>&1
ln -sfn /tmp/td20/bench/ssb-sf20 /tmp/tdp
( export TESSERA_EXP_NARROW=1 TESSERA_EXP_NARROW_WORDS=1; SOURCE="q1.1:1" bash $S source > $OUT/log2-source-words.txt 2>&1 )
rm -f $OUT/ncu/*.ncu-rep; tar czf $OUT/run2-sass.tgz -C $OUT ncu && rm -rf $OUT/ncu
export TESSERA_EXP_NARROW_WORDS=1
SEEDS=10 SEED0=1929 DIFFTEST_SECONDS=150 NARROW_SEEDS=5 bash $S difftests > $OUT/log2-difftests.txt 2>&1
ls -la $OUT
