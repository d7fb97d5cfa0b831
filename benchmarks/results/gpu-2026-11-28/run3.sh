#!/usr/bin/env bash
# Run 3 of 2026-11-28 at the small-records commit: GPU unit tests; EXPLAIN ANALYZE of
# SSB SF20 with the defaults (lean pipelines at 8 items, small domains' records in one
# launch), without the one-launch records (TESSERA_EXP_SMALL_RECORDS_MAX=0) and without
# both; SSB SF1 and TPC-H SF1 answers checked; then `bench` in turns, each in its own
# process: SSB SF20 20 warm runs x 3 rounds, the defaults against both switched off.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/log3-tests.txt
bash $S tests >> $OUT/log3-tests.txt 2>&1
EXPS="- TESSERA_EXP_SMALL_RECORDS_MAX=0 TESSERA_EXP_SMALL_RECORDS_MAX=0,TESSERA_EXP_LEAN_ITEMS=0 -" bash $S exp > $OUT/log3-exp.txt 2>&1
{
echo "== SF1 answers checked (lines without a check mark only)"
for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
} > $OUT/log3-sf1.txt 2>&1
mkdir -p /tmp/r3
{
for r in 1 2 3; do
  for e in default old; do
    echo "== SSB SF20, round $r, $e"
    ( [ $e = default ] || export TESSERA_EXP_SMALL_RECORDS_MAX=0 TESSERA_EXP_LEAN_ITEMS=0
      $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 20 --engine tessera --json /tmp/r3/run3-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ (q|total)" )
  done
done
} > $OUT/log3-bench.txt 2>&1
tar -C /tmp/r3 -czf $OUT/run3-json.tgz .
ls -la $OUT
