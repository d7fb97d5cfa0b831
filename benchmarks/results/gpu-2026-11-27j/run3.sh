#!/usr/bin/env bash
# Run 3 of 2026-11-27 (j), on run 2's machine right after it: the host-time changes (a
# cached plan's placement found by its number, one manifest read a statement, one
# column-cache lock at admission), and the experiment that sends small sorted
# aggregations' groups back whole for the CPU backend to sort
# (TESSERA_EXP_HOST_SORT_MAX_GROUPS). GPU unit tests; SSB SF20 `bench`, 5 runs, each
# setting in its own process, three rounds in turns; a traced run of each; SSB SF1 and
# TPC-H SF1 answers checked with both settings.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
bash $S tests > $OUT/log3-tests.txt 2>&1
{
for r in 1 2 3; do
  echo "== round $r, new"
  $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 5 --engine tessera 2>&1 | grep -E "^│ (q|total)"
  echo "== round $r, new, TESSERA_EXP_HOST_SORT_MAX_GROUPS=65536"
  TESSERA_EXP_HOST_SORT_MAX_GROUPS=65536 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 5 --engine tessera 2>&1 | grep -E "^│ (q|total)"
done
} > $OUT/log3-bench.txt 2>&1
TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 10 --engine tessera > /dev/null 2> $OUT/log3-trace-new.txt
TESSERA_TRACE_HOST=1 TESSERA_EXP_HOST_SORT_MAX_GROUPS=65536 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 10 --engine tessera > /dev/null 2> $OUT/log3-trace-hostsort.txt
{
for e in 0 65536; do
  echo "== SF1 answers checked, TESSERA_EXP_HOST_SORT_MAX_GROUPS=$e (lines without a check mark only)"
  for s in ssb tpch; do TESSERA_EXP_HOST_SORT_MAX_GROUPS=$e $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 2 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
done
} > $OUT/log3-sf1.txt 2>&1
ls -la $OUT
