#!/usr/bin/env bash
# Run 2 of 2026-11-28c, the pack of 272017f (a query's sink arrays set up at admission
# with one fill launch): GPU unit tests; SSB SF1 and TPC-H SF1 answers checked with the
# defaults and with TESSERA_EXP_QUERY_FILL=0 (a fill per pipeline, as before); SSB SF20
# `bench`, 20 warm runs x 4 rounds, each setting in its own process, the order reversed
# every other round; then a traced pass (10 runs) of each (TESSERA_TRACE_HOST=1).
S=benchmarks/device/gpu-suite.sh
bash $S tests > $OUT/log2-tests.txt 2>&1
tail -3 $OUT/log2-tests.txt
X=/tmp/tessera-gpu/bin/tessera
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{
for e in default qf0; do
  echo "== SF1 answers checked, $e (lines without a check mark only)"
  ( [ $e = default ] || export TESSERA_EXP_QUERY_FILL=0
    for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done )
done
} > $OUT/log2-sf1.txt 2>&1
cat $OUT/log2-sf1.txt
mkdir -p /tmp/r2
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
{
for r in 1 2 3 4; do
  order="default qf0"; [ $((r % 2)) = 0 ] && order="qf0 default"
  for e in $order; do
    echo "== SSB SF20, round $r, $e"
    ( [ $e = default ] || export TESSERA_EXP_QUERY_FILL=0
      $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 20 --engine tessera --json /tmp/r2/run2-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ (q|total)" )
  done
done
} > $OUT/log2-bench.txt 2>&1
grep -E "^==|total" $OUT/log2-bench.txt
for e in default qf0; do
  ( [ $e = default ] || export TESSERA_EXP_QUERY_FILL=0
    TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 10 --engine tessera 2>&1 | grep -E "^trace " | gzip > $OUT/log2-trace-$e.txt.gz )
done
tar -C /tmp/r2 -czf $OUT/run2-json.tgz .
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r2 run2-ssb20 2>&1 | tail -20
