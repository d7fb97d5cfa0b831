#!/usr/bin/env bash
# Run 6 of 2026-11-28 at the gather-many commit: GPU unit tests; EXPLAIN ANALYZE of SSB
# SF20 and TPC-H SF10 (per pipeline) with the defaults, without the one-launch gathers
# (TESSERA_EXP_GATHER_MANY=0), and with this session's chain and item changes all off
# ("old": GATHER_MANY=0, SMALL_RECORDS_MAX=0, LEAN_ITEMS=0; the compaction's parallel
# sum of block counts stays); SF1 answers checked; `bench` in turns, each setting in its
# own process: SSB SF20 20 warm runs x 3 rounds, TPC-H SF10 3 warm runs x 2 rounds,
# defaults against "old"; the first query in a new process.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
OLD="TESSERA_EXP_GATHER_MANY=0 TESSERA_EXP_SMALL_RECORDS_MAX=0 TESSERA_EXP_LEAN_ITEMS=0"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/log6-tests.txt
bash $S tests >> $OUT/log6-tests.txt 2>&1
EXPS="- TESSERA_EXP_GATHER_MANY=0 ${OLD// /,} -" bash $S exp > $OUT/log6-exp.txt 2>&1
QUERIES="q01 q02 q03 q04 q05 q06 q07 q08 q09 q10 q11 q12 q13 q14 q15 q16 q17 q18 q19 q20 q21 q22" \
EXPS="- ${OLD// /,}" bash $S tpchexp > $OUT/log6-tpchexp.txt 2>&1
{
echo "== SF1 answers checked (lines without a check mark only)"
for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
echo "== SF1 answers checked, old (lines without a check mark only)"
for s in ssb tpch; do env $OLD $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
} > $OUT/log6-sf1.txt 2>&1
mkdir -p /tmp/r6
{
for r in 1 2 3; do
  for e in default old; do
    echo "== SSB SF20, round $r, $e"
    ( [ $e = default ] || export $OLD
      $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 20 --engine tessera --json /tmp/r6/run6-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ (q|total)" )
  done
done
for r in 1 2; do
  for e in default old; do
    echo "== TPC-H SF10, round $r, $e"
    ( [ $e = default ] || export $OLD
      $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --json /tmp/r6/run6-tpch10-r$r-e$e.json 2>&1 | grep -E "^│ (q|total)" )
  done
done
} > $OUT/log6-bench.txt 2>&1
tar -C /tmp/r6 -czf $OUT/run6-json.tgz .
bash $S cold > $OUT/log6-cold.txt 2>&1
for i in 1 2 3; do
  s=$(date +%s.%N)
  $X --format csv --data-dir /tmp/tdh10/bench/tpch-sf10 -c "EXPLAIN ANALYZE $(sed '/^--/d' benchmarks/tpch/q01.sql)" > /tmp/cold-q01.txt 2>&1
  e=$(date +%s.%N)
  echo "TPC-H SF10 q01, first query of a new process (kernel disk cache warm): $(python3 -c "print(round($e - $s, 3))") s; $(grep -E 'query:|rror' /tmp/cold-q01.txt | tr -d '"' | cut -c1-120)"
done >> $OUT/log6-cold.txt 2>&1
ls -la $OUT
