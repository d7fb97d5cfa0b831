#!/usr/bin/env bash
# Run 3 of 2026-11-28d, the pack of 1fbdd04 (the build cache keeps only builds over
# stored tables of at most 2^22 rows): SSB SF1 and TPC-H SF1 answers checked (the last of
# 3 runs); gpu_build_cache.slt in order on the GPU and the CPU backend; TPC-H SF10 `bench`
# with the cache (default) against TESSERA_EXP_BUILD_CACHE=0, 3 warm runs x 4 rounds in
# turns; EXPLAIN ANALYZE of q03, q05, q08, q09 with the cache (after 2 runs); SSB SF20
# both ways, 15 warm runs x 6 rounds in turns. At most 8 files come back: logs are
# bundled.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
{
echo "== SF1 answers checked (the last of 3 runs); lines without a check mark only"
for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 2 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
awk '/^(statement ok|query)/{on=1; buf=""; next} on&&(/^----$/||/^$/){if(buf!="") print buf ";"; on=0; next} on{buf=buf (buf==""?"":" ") $0} END{if(on&&buf!="") print buf ";"}' tests/slt/gpu_build_cache.slt | grep -v "^SET tessera.device" > /tmp/bc.sql
for dev in gpu cpu; do
  rm -rf /tmp/tdbc-$dev
  (echo "SET tessera.device = '$dev';"; cat /tmp/bc.sql) > /tmp/bc-$dev.sql
  $X --format csv --data-dir /tmp/tdbc-$dev sql /tmp/bc-$dev.sql > /tmp/bc-$dev.txt 2>&1
done
cmp /tmp/bc-gpu.txt /tmp/bc-cpu.txt && echo "gpu_build_cache: GPU and CPU answers identical ($(wc -l < /tmp/bc-gpu.txt) lines, $(grep -ci rror /tmp/bc-gpu.txt) errors)"
} > $OUT/log3-checks.txt 2>&1
cat $OUT/log3-checks.txt
mkdir -p /tmp/r3
$X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1
{
for r in 1 2 3 4; do
  order="1 0"; [ $((r % 2)) = 0 ] && order="0 1"
  for e in $order; do
    echo "== TPC-H SF10, round $r, BUILD_CACHE=$e"
    TESSERA_EXP_BUILD_CACHE=$e $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --json /tmp/r3/run3-tpch10-r$r-e$e.json 2>&1 | grep -E "^│ (total|q)"
  done
done
} > $OUT/log3-tpch-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r3 run3-tpch10 > $OUT/log3-tpch-ab.txt 2>&1
cat $OUT/log3-tpch-ab.txt
{
for q in q03 q05 q08 q09; do
  echo "== $q"
  f=/tmp/a.sql; sed '/^--/d' benchmarks/tpch/$q.sql > $f; sed '/^--/d' benchmarks/tpch/$q.sql >> $f; echo "EXPLAIN ANALYZE" >> $f; sed '/^--/d' benchmarks/tpch/$q.sql >> $f
  $X --format csv --data-dir /tmp/tdh10/bench/tpch-sf10 sql $f 2>&1 | grep -E "pipeline [0-9]+ \[GPU\]|GPU kernels" | sed -E 's/; (sink|start|kernel queued|launched|columns found|outputs|parameters)[^;)]*//g'
done
} > $OUT/log3-analyze.txt 2>&1
echo "tables from the build cache in log3-analyze: $(grep -c 'taken from the build cache' $OUT/log3-analyze.txt)"
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
{
for r in 1 2 3 4 5 6; do
  order="1 0"; [ $((r % 2)) = 0 ] && order="0 1"
  for e in $order; do
    echo "== SSB SF20, round $r, BUILD_CACHE=$e"
    TESSERA_EXP_BUILD_CACHE=$e $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r3/run3-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log3-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r3 run3-ssb20 > $OUT/log3-ssb-ab.txt 2>&1
cat $OUT/log3-ssb-ab.txt
tar -C /tmp/r3 -czf $OUT/run3-json.tgz .
