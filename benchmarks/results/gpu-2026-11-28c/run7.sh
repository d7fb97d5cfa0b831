#!/usr/bin/env bash
# Run 7 of 2026-11-28c, run 6's pack: TPC-H SF10 `bench`, 3 warm runs x 4 rounds, the
# defaults against TESSERA_EXP_QUERY_FILL=0 in turns, each in its own process; then
# random queries (difftest), seeds 2006-2013 (six narrowed as by default, two plain),
# 150 s each, at once.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
mkdir -p /tmp/r7
$X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1
{
for r in 1 2 3 4; do
  order="2 0"; [ $((r % 2)) = 0 ] && order="0 2"
  for e in $order; do
    echo "== TPC-H SF10, round $r, QUERY_FILL=$e"
    TESSERA_EXP_QUERY_FILL=$e $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --json /tmp/r7/run7-tpch10-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log7-tpch-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r7 run7-tpch10 > $OUT/log7-tpch-ab.txt 2>&1
cat $OUT/log7-tpch-ab.txt
tar -C /tmp/r7 -czf $OUT/run7-json.tgz .
SEEDS=8 SEED0=2005 NARROW_SEEDS=6 DIFFTEST_SECONDS=150 bash $S difftests > $OUT/log7-difftests.txt 2>&1
tail -25 $OUT/log7-difftests.txt
