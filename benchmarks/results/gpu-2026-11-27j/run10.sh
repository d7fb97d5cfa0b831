#!/usr/bin/env bash
# Run 10 of 2026-11-27 (j) at 4bb7695, right after run 9 on its machine: the eager-load
# threshold (TESSERA_EXP_EAGER_SECTORS, default 0.1) swept finer in EXPLAIN ANALYZE, then
# `bench` with 0.25 against the default, each in its own process, in turns: SSB SF20 20
# warm runs × 2 rounds, TPC-H SF10 3 warm runs × 2 rounds (JSON in run10-json.tgz).
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
EXPS="- TESSERA_EXP_EAGER_SECTORS=0.15 TESSERA_EXP_EAGER_SECTORS=0.2 TESSERA_EXP_EAGER_SECTORS=0.25 TESSERA_EXP_EAGER_SECTORS=0.35 TESSERA_EXP_EAGER_SECTORS=0.5" bash $S exp > $OUT/log10-exp.txt 2>&1
mkdir -p /tmp/j10
{
for r in 1 2; do
  for e in 0.1 0.25; do
    echo "== SSB SF20, round $r, TESSERA_EXP_EAGER_SECTORS=$e"
    TESSERA_EXP_EAGER_SECTORS=$e $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 20 --engine tessera --json /tmp/j10/run10-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ (q|total)"
  done
done
for r in 1 2; do
  for e in 0.1 0.25; do
    echo "== TPC-H SF10, round $r, TESSERA_EXP_EAGER_SECTORS=$e"
    TESSERA_EXP_EAGER_SECTORS=$e $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --json /tmp/j10/run10-tpch10-r$r-e$e.json 2>&1 | grep -E "^│ (q|total)"
  done
done
} > $OUT/log10-bench.txt 2>&1
tar -C /tmp/j10 -czf $OUT/run10-json.tgz .
ls -la $OUT
