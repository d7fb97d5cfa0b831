#!/usr/bin/env bash
# Run 7 of 2026-11-28, right after run 6 on its machine: SSB SF20 `bench`, 20 warm runs x
# 4 rounds, each setting in its own process, the order reversed every other round: the
# defaults, without the one-launch gathers (TESSERA_EXP_GATHER_MANY=0), and "old" (also
# without the one-block records and the lean items); then a traced pass (10 runs) of
# the defaults and of "old" (TESSERA_TRACE_HOST=1).
X=/tmp/tessera-gpu/bin/tessera
mkdir -p /tmp/r7
{
for r in 1 2 3 4; do
  order="default gm0 old"; [ $((r % 2)) = 0 ] && order="old gm0 default"
  for e in $order; do
    echo "== SSB SF20, round $r, $e"
    ( case $e in
        gm0) export TESSERA_EXP_GATHER_MANY=0 ;;
        old) export TESSERA_EXP_GATHER_MANY=0 TESSERA_EXP_SMALL_RECORDS_MAX=0 TESSERA_EXP_LEAN_ITEMS=0 ;;
      esac
      $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 20 --engine tessera --json /tmp/r7/run7-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ (q|total)" )
  done
done
} > $OUT/log7-bench.txt 2>&1
for e in default old; do
  ( [ $e = default ] || export TESSERA_EXP_GATHER_MANY=0 TESSERA_EXP_SMALL_RECORDS_MAX=0 TESSERA_EXP_LEAN_ITEMS=0
    TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 10 --engine tessera 2>&1 | grep -E "^trace " | gzip > $OUT/log7-trace-$e.txt.gz )
done
tar -C /tmp/r7 -czf $OUT/run7-json.tgz .
ls -la $OUT
