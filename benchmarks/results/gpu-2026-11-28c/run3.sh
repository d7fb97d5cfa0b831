#!/usr/bin/env bash
# Run 3 of 2026-11-28c, the pack of 272017f as run 2: more rounds of the A/B, whose
# process-to-process spread (run 2: 5.7-6.4 ms for one setting) hid the difference.
# SSB SF20 `bench`, 15 warm runs x 8 rounds, each setting in its own process, the order
# reversed every other round: the defaults (one fill a query) and TESSERA_EXP_QUERY_FILL=0
# (a fill a pipeline); then TPC-H SF10, 3 warm runs x 3 rounds, likewise.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
mkdir -p /tmp/r3
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
{
for r in 1 2 3 4 5 6 7 8; do
  order="default qf0"; [ $((r % 2)) = 0 ] && order="qf0 default"
  for e in $order; do
    echo "== SSB SF20, round $r, $e"
    ( [ $e = default ] || export TESSERA_EXP_QUERY_FILL=0
      $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r3/run3-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total" )
  done
done
} > $OUT/log3-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r3 run3-ssb20 > $OUT/log3-ssb-ab.txt 2>&1
cat $OUT/log3-ssb-ab.txt
s0=$(date +%s)
$X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1
echo "TPC-H SF10 generated and loaded in $(( $(date +%s) - s0 )) s"
{
for r in 1 2 3; do
  order="default qf0"; [ $((r % 2)) = 0 ] && order="qf0 default"
  for e in $order; do
    echo "== TPC-H SF10, round $r, $e"
    ( [ $e = default ] || export TESSERA_EXP_QUERY_FILL=0
      $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --json /tmp/r3/run3-tpch10-r$r-e$e.json 2>&1 | grep -E "^│ total" )
  done
done
} > $OUT/log3-tpch-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r3 run3-tpch10 > $OUT/log3-tpch-ab.txt 2>&1
cat $OUT/log3-tpch-ab.txt
tar -C /tmp/r3 -czf $OUT/run3-json.tgz .
