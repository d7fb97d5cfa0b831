#!/usr/bin/env bash
# Run 6 of 2026-11-27 (j) at 4bb7695: the chain after an aggregation without its two
# copies (the count's zeroing, the rank keys' upload) against them
# (TESSERA_EXP_SHORT_CHAIN=0), and the experiment variables read once a process (not
# switchable), each in its own process, in turns. GPU unit tests; SSB SF20 `bench`, 20
# warm runs, three rounds; TPC-H SF10, 3 warm runs, two rounds (per-run times in
# run6-json.tgz); SSB SF1 and TPC-H SF1 answers checked; the GPU-result slt files on
# the GPU against the CPU backend; first query in a new process (SSB SF20 q1.1, q2.1,
# q3.1, q4.3; TPC-H SF10 q01), kernel disk cache warm and empty.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
bash $S tests > $OUT/log6-tests.txt 2>&1
[ -d /tmp/td20/bench/ssb-sf20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera > /dev/null 2>&1
mkdir -p /tmp/j6
{
for r in 1 2 3; do
  for e in 1 0; do
    echo "== SSB SF20, round $r, TESSERA_EXP_SHORT_CHAIN=$e"
    TESSERA_EXP_SHORT_CHAIN=$e $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 20 --engine tessera --json /tmp/j6/run6-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ (q|total)"
  done
done
for r in 1 2; do
  for e in 1 0; do
    echo "== TPC-H SF10, round $r, TESSERA_EXP_SHORT_CHAIN=$e"
    TESSERA_EXP_SHORT_CHAIN=$e $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --json /tmp/j6/run6-tpch10-r$r-e$e.json 2>&1 | grep -E "^│ (q|total)"
  done
done
echo "== SF1 answers checked (lines without a check mark only)"
for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 2 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
} > $OUT/log6-bench.txt 2>&1
tar -C /tmp/j6 -czf $OUT/run6-json.tgz .
mkdir -p /tmp/j6res && OUT=/tmp/j6res bash $S results > $OUT/log6-results.txt 2>&1
tar -C /tmp/j6res -czf $OUT/run6-results.tgz .
bash $S cold > $OUT/log6-cold.txt 2>&1
{
echo "== TPC-H SF10 q01, first query in a new process"
T=/tmp/tdh10/bench/tpch-sf10
for cache in warm-disk-cache empty-disk-cache; do
  [ $cache = empty-disk-cache ] && rm -rf $T/kernels
  s=$(date +%s.%N)
  $X --format csv --data-dir $T -c "EXPLAIN ANALYZE $(sed '/^--/d' benchmarks/tpch/q01.sql)" > /tmp/cold-q01.txt 2>&1
  e=$(date +%s.%N)
  echo "q01 $cache: process $(python3 -c "print(round($e - $s, 3))") s; $(grep -E 'query:|kernels|rror' /tmp/cold-q01.txt | tr -d '"' | tr '\n' ' ')"
done
} >> $OUT/log6-cold.txt 2>&1
ls -la $OUT
