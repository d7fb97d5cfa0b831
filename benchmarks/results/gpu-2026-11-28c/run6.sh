#!/usr/bin/env bash
# Run 6 of 2026-11-28c, the pack of b1a8059 (builds' sinks preset by default,
# TESSERA_EXP_QUERY_FILL=2): GPU unit tests; SSB SF1 and TPC-H SF1 answers checked; the
# ten GPU-result slt files on the GPU and the CPU backend; SSB SF20 `bench`, 15 warm runs
# x 8 rounds, the defaults against QUERY_FILL=0 in turns, each in its own process; a
# traced pass (10 runs) of each.
S=benchmarks/device/gpu-suite.sh
bash $S tests > $OUT/log6-tests.txt 2>&1
tail -2 $OUT/log6-tests.txt
X=/tmp/tessera-gpu/bin/tessera
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{
echo "== SF1 answers checked, defaults (lines without a check mark only)"
for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
} > $OUT/log6-sf1.txt 2>&1
cat $OUT/log6-sf1.txt
mkdir -p /tmp/x6
OUT=/tmp/x6 bash $S results > $OUT/log6-results.txt 2>&1
grep -hE "identical|errors" $OUT/log6-results.txt
mkdir -p /tmp/r6
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
{
for r in 1 2 3 4 5 6 7 8; do
  order="2 0"; [ $((r % 2)) = 0 ] && order="0 2"
  for e in $order; do
    echo "== SSB SF20, round $r, QUERY_FILL=$e"
    TESSERA_EXP_QUERY_FILL=$e $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r6/run6-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log6-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r6 run6-ssb20 > $OUT/log6-ssb-ab.txt 2>&1
cat $OUT/log6-ssb-ab.txt
for e in 2 0; do
  TESSERA_EXP_QUERY_FILL=$e TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 10 --engine tessera 2>&1 | grep -E "^trace " | gzip > $OUT/log6-trace-e$e.txt.gz
done
tar -C /tmp/r6 -czf $OUT/run6-json.tgz .
