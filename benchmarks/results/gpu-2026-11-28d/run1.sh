#!/usr/bin/env bash
# Run 1 of 2026-11-28d, the pack of ec55b52 (the build cache): GPU unit tests; SSB SF1
# and TPC-H SF1 answers checked (the last of 3 runs, whose builds come from the cache);
# gpu_build_cache.slt's statements in order on the GPU and the CPU backend, answers
# compared, and its queries under EXPLAIN ANALYZE (cache hits counted); the ten
# GPU-result slt files; SSB SF20 with the cache (default) against without
# (TESSERA_EXP_BUILD_CACHE=0), 15 warm runs x 8 rounds in turns, each in its own process;
# EXPLAIN ANALYZE of q2.1, q3.1 and q4.1 both ways (third run of each); a traced pass
# both ways.
S=benchmarks/device/gpu-suite.sh
bash $S tests > $OUT/log1-tests.txt 2>&1
tail -3 $OUT/log1-tests.txt
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{
echo "== SF1 answers checked (the last of 3 runs), build cache on; lines without a check mark only"
for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 2 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
} > $OUT/log1-sf1.txt 2>&1
cat $OUT/log1-sf1.txt
# gpu_build_cache.slt in order (inserts and a drop between its queries).
awk '/^(statement ok|query)/{on=1; buf=""; next} on&&(/^----$/||/^$/){if(buf!="") print buf ";"; on=0; next} on{buf=buf (buf==""?"":" ") $0} END{if(on&&buf!="") print buf ";"}' tests/slt/gpu_build_cache.slt | grep -v "^SET tessera.device" > /tmp/bc.sql
for dev in gpu cpu; do
  rm -rf /tmp/tdbc-$dev
  (echo "SET tessera.device = '$dev';"; cat /tmp/bc.sql) > /tmp/bc-$dev.sql
  $X --format csv --data-dir /tmp/tdbc-$dev sql /tmp/bc-$dev.sql > $OUT/log1-bc-$dev.txt 2>&1
done
cmp $OUT/log1-bc-gpu.txt $OUT/log1-bc-cpu.txt && echo "gpu_build_cache: GPU and CPU answers identical ($(wc -l < $OUT/log1-bc-gpu.txt) lines, $(grep -ci rror $OUT/log1-bc-gpu.txt) errors)"
rm -rf /tmp/tdbc-an
(echo "SET tessera.device = 'gpu';"; sed 's/^SELECT/EXPLAIN ANALYZE SELECT/' /tmp/bc.sql) > /tmp/bc-an.sql
$X --data-dir /tmp/tdbc-an sql /tmp/bc-an.sql > $OUT/log1-bc-analyze.txt 2>&1
echo "gpu_build_cache under EXPLAIN ANALYZE: GPU pipelines $(grep -cE 'pipeline [0-9]+ \[GPU\]' $OUT/log1-bc-analyze.txt), tables from the build cache $(grep -c 'taken from the build cache' $OUT/log1-bc-analyze.txt), errors $(grep -ci rror $OUT/log1-bc-analyze.txt)"
mkdir -p /tmp/x1
OUT=/tmp/x1 bash $S results > $OUT/log1-results.txt 2>&1
grep -hE "identical|errors" $OUT/log1-results.txt
mkdir -p /tmp/r1
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
{
for r in 1 2 3 4 5 6 7 8; do
  order="1 0"; [ $((r % 2)) = 0 ] && order="0 1"
  for e in $order; do
    echo "== SSB SF20, round $r, BUILD_CACHE=$e"
    TESSERA_EXP_BUILD_CACHE=$e $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r1/run1-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log1-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r1 run1-ssb20 > $OUT/log1-ssb-ab.txt 2>&1
cat $OUT/log1-ssb-ab.txt
tar -C /tmp/r1 -czf $OUT/run1-json.tgz .
{
for q in q2.1 q3.1 q4.1; do
  for e in 1 0; do
    echo "== $q, BUILD_CACHE=$e"
    f=/tmp/a.sql; sed '/^--/d' benchmarks/ssb/$q.sql > $f; sed '/^--/d' benchmarks/ssb/$q.sql >> $f; echo "EXPLAIN ANALYZE" >> $f; sed '/^--/d' benchmarks/ssb/$q.sql >> $f
    TESSERA_EXP_BUILD_CACHE=$e $X --format csv --data-dir /tmp/td20/bench/ssb-sf20 sql $f 2>&1 | grep -E "pipeline [0-9]+ \[GPU\]|GPU kernels" | sed -E 's/; (sink|start|kernel queued|launched|columns found|outputs|parameters)[^;)]*//g'
  done
done
} > $OUT/log1-analyze.txt 2>&1
for e in 1 0; do
  TESSERA_TRACE_HOST=1 TESSERA_EXP_BUILD_CACHE=$e $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 6 --engine tessera 2>&1 | grep "^trace" | gzip > $OUT/log1-trace-e$e.txt.gz
done
for e in 1 0; do
  echo "== BUILD_CACHE=$e"
  python3 benchmarks/results/gpu-2026-11-27j/trace.py --phases $OUT/log1-trace-e$e.txt.gz 2>&1 | tail -16
done > $OUT/log1-trace-table.txt
cat $OUT/log1-trace-table.txt
