#!/usr/bin/env bash
# Run 4 of 2026-11-28c, the pack of the commit that made TESSERA_EXP_QUERY_FILL a mode
# (1: every sink preset at admission, the default; 2: only hash-table builds'; 0: none).
# Run 3 found SSB q3.1's kernels slower with every sink preset (0.56-0.66 ms, two modes
# by process, against 0.545 in every process without). SSB SF20 `bench`, 15 warm runs x
# 6 rounds, each mode in its own process, the order rotated each round; then EXPLAIN
# ANALYZE of q3.1 and q2.1 in each mode, three processes each (the third run of each).
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 /tmp/tessera-gpu/tests/* 2>&1 | grep -E "^(test result|test .*FAILED)|panicked" > $OUT/log4-tests.txt
cat $OUT/log4-tests.txt
mkdir -p /tmp/r4
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
{
for r in 1 2 3 4 5 6; do
  case $((r % 3)) in 1) order="1 2 0" ;; 2) order="2 0 1" ;; 0) order="0 1 2" ;; esac
  for e in $order; do
    echo "== SSB SF20, round $r, QUERY_FILL=$e"
    TESSERA_EXP_QUERY_FILL=$e $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r4/run4-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log4-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r4 run4-ssb20 > $OUT/log4-ssb-ab.txt 2>&1
cat $OUT/log4-ssb-ab.txt
{
for q in q3.1 q2.1; do
  for e in 1 2 0; do
    for p in 1 2 3; do
      echo "== $q, QUERY_FILL=$e, process $p"
      f=/tmp/a.sql; sed '/^--/d' benchmarks/ssb/$q.sql > $f; sed '/^--/d' benchmarks/ssb/$q.sql >> $f; echo "EXPLAIN ANALYZE" >> $f; sed '/^--/d' benchmarks/ssb/$q.sql >> $f
      TESSERA_EXP_QUERY_FILL=$e $X --format csv --data-dir /tmp/td20/bench/ssb-sf20 sql $f 2>&1 | grep -oE "pipeline [0-9]+ \[GPU\]: [0-9]+ rows in, [0-9]+ rows out, kernel [0-9.]+ ms"
    done
  done
done
} > $OUT/log4-analyze.txt 2>&1
tar -C /tmp/r4 -czf $OUT/run4-json.tgz .
