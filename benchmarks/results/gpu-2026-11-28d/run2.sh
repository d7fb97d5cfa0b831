#!/usr/bin/env bash
# Run 2 of 2026-11-28d, run 1's pack: GPU unit tests (run 1 returned no more than 8 files:
# its test log was among those left out); TPC-H SF10 `bench`, 3 warm runs x 4 rounds, the
# build cache (default) against TESSERA_EXP_BUILD_CACHE=0 in turns, each in its own
# process; EXPLAIN ANALYZE of q03, q05, q08 with the cache (after 2 runs); then random
# queries (difftest), seeds 2014-2021 (six narrowed as by default, two plain), 170 s
# each, at once.
S=benchmarks/device/gpu-suite.sh
bash $S tests > $OUT/log2-tests.txt 2>&1
tail -3 $OUT/log2-tests.txt
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
mkdir -p /tmp/r2
$X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1
{
for r in 1 2 3 4; do
  order="1 0"; [ $((r % 2)) = 0 ] && order="0 1"
  for e in $order; do
    echo "== TPC-H SF10, round $r, BUILD_CACHE=$e"
    TESSERA_EXP_BUILD_CACHE=$e $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --json /tmp/r2/run2-tpch10-r$r-e$e.json 2>&1 | grep -E "^│ (total|q)"
  done
done
} > $OUT/log2-tpch-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r2 run2-tpch10 > $OUT/log2-tpch-ab.txt 2>&1
cat $OUT/log2-tpch-ab.txt
tar -C /tmp/r2 -czf $OUT/run2-json.tgz .
{
for q in q03 q05 q08; do
  echo "== $q"
  f=/tmp/a.sql; sed '/^--/d' benchmarks/tpch/$q.sql > $f; sed '/^--/d' benchmarks/tpch/$q.sql >> $f; echo "EXPLAIN ANALYZE" >> $f; sed '/^--/d' benchmarks/tpch/$q.sql >> $f
  $X --format csv --data-dir /tmp/tdh10/bench/tpch-sf10 sql $f 2>&1 | grep -E "pipeline [0-9]+ \[GPU\]|GPU kernels" | sed -E 's/; (sink|start|kernel queued|launched|columns found|outputs|parameters)[^;)]*//g'
done
} > $OUT/log2-analyze.txt 2>&1
grep -c "taken from the build cache" $OUT/log2-analyze.txt
SEEDS=8 SEED0=2013 NARROW_SEEDS=6 DIFFTEST_SECONDS=170 bash $S difftests > $OUT/log2-difftests.txt 2>&1
tail -25 $OUT/log2-difftests.txt
