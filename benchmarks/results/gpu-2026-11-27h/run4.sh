#!/usr/bin/env bash
# Run 4 of 2026-11-27 (h), on run 3's machine: SF1 answers checked with the default;
# first query in a new process (SSB SF20 q1.1-q4.3, TPC-H SF10 q01; kernel disk cache
# warm and emptied); SSB SF20 and TPC-H SF10 beside DuckDB 1.5.5 (answers checked
# against DuckDB).
# Carry [".gpu", ".whl"].
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
{
echo "== SF1 answers checked, the default"
for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 2 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
} > $OUT/log4-sf1.txt 2>&1
{
bash $S cold
T=/tmp/tdh10/bench/tpch-sf10
for cache in warm-disk-cache empty-disk-cache warm-disk-cache; do
  [ $cache = empty-disk-cache ] && rm -rf $T/kernels
  s=$(date +%s.%N)
  $X --format csv --data-dir $T -c "EXPLAIN ANALYZE $(sed '/^--/d' benchmarks/tpch/q01.sql)" > /tmp/cold.txt 2>&1
  e=$(date +%s.%N)
  echo "tpch q01 $cache: process $(python3 -c "print(round($e - $s, 3))") s; $(grep -E 'query:|kernels|rror' /tmp/cold.txt | tr -d '"' | tr '\n' ' ')"
done
} > $OUT/log4-cold.txt 2>&1
{
echo "== SSB SF20 tessera + duckdb"
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 5 --engine tessera --engine duckdb --json $OUT/ssb20.json 2>&1 | grep -v '^\s*$'
echo "== TPC-H SF10 tessera + duckdb"
$X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --engine duckdb --json $OUT/tpch10.json 2>&1 | grep -v '^\s*$'
} > $OUT/log4-duckdb.txt 2>&1
ls -la $OUT
