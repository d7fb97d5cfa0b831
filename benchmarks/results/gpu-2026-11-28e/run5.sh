#!/usr/bin/env bash
# Run 5 of 2026-11-28e, the final code (run 1's tessera_small_sorted_records with its
# flag loads unrolled, after run 4's version, which ranked a record a warp over records
# each block placed in its own order, failed; spare sink arrays up to 64 MiB, dropped
# first when an allocation needs room): GPU unit tests; SSB SF1 and TPC-H SF1
# answers checked (the last of 3 runs); gpu_repeats.slt (before and after its overflow,
# in two processes a backend) and gpu_build_cache.slt on the GPU and the CPU backend;
# the ten GPU-result slt files; SSB SF20, 15 warm runs x 4 rounds in turns, with the
# defaults (d), TESSERA_EXP_SMALL_SORT_MAX=0 (s), TESSERA_EXP_SPARE_SINKS=0 (p) and both
# (o); EXPLAIN ANALYZE of the grouped queries with the defaults.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
($X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /tmp/gen20.txt 2>&1) &
{
echo "== GPU unit tests"
OUT=/tmp/x5 bash $S tests 2>&1 | grep -E "test result|FAILED|panicked"
echo "== SF1 answers checked (the last of 3 runs); lines without a check mark only"
for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 3 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
awk '/^(statement|query)/{on=1; buf=""; next} on&&(/^----$/||/^$/){if(buf!="") print buf ";"; on=0; next} on{buf=buf (buf==""?"":" ") $0} END{if(on&&buf!="") print buf ";"}' tests/slt/gpu_repeats.slt | grep -v "^SET tessera.device" > /tmp/rep.sql
n=$(grep -n "SELECT sum(x) FROM o" /tmp/rep.sql | head -1 | cut -d: -f1)
head -n $((n - 1)) /tmp/rep.sql > /tmp/rep-a.sql; tail -n +$((n + 2)) /tmp/rep.sql > /tmp/rep-b.sql
for dev in gpu cpu; do
  rm -rf /tmp/tdrep-$dev
  for part in a b; do
    (echo "SET tessera.device = '$dev';"; cat /tmp/rep-$part.sql) > /tmp/rep-$part-$dev.sql
    $X --format csv --data-dir /tmp/tdrep-$dev sql /tmp/rep-$part-$dev.sql > /tmp/rep-$part-$dev.txt 2>&1
  done
done
for part in a b; do cmp /tmp/rep-$part-gpu.txt /tmp/rep-$part-cpu.txt && echo "gpu_repeats part $part: GPU and CPU answers identical ($(wc -l < /tmp/rep-$part-gpu.txt) lines, $(grep -ci rror /tmp/rep-$part-gpu.txt) errors)"; done
awk '/^(statement ok|query)/{on=1; buf=""; next} on&&(/^----$/||/^$/){if(buf!="") print buf ";"; on=0; next} on{buf=buf (buf==""?"":" ") $0} END{if(on&&buf!="") print buf ";"}' tests/slt/gpu_build_cache.slt | grep -v "^SET tessera.device" > /tmp/bc.sql
for dev in gpu cpu; do
  rm -rf /tmp/tdbc-$dev
  (echo "SET tessera.device = '$dev';"; cat /tmp/bc.sql) > /tmp/bc-$dev.sql
  $X --format csv --data-dir /tmp/tdbc-$dev sql /tmp/bc-$dev.sql > /tmp/bc-$dev.txt 2>&1
done
cmp /tmp/bc-gpu.txt /tmp/bc-cpu.txt && echo "gpu_build_cache: GPU and CPU answers identical ($(wc -l < /tmp/bc-gpu.txt) lines, $(grep -ci rror /tmp/bc-gpu.txt) errors)"
mkdir -p /tmp/x5r
OUT=/tmp/x5r bash $S results 2>&1 | grep -hE "identical|errors"
} > $OUT/log5-checks.txt 2>&1
cat $OUT/log5-checks.txt
wait
tail -2 /tmp/gen20.txt
mkdir -p /tmp/r5
setting() { case $1 in d) echo "";; s) echo "TESSERA_EXP_SMALL_SORT_MAX=0";; p) echo "TESSERA_EXP_SPARE_SINKS=0";; o) echo "TESSERA_EXP_SMALL_SORT_MAX=0 TESSERA_EXP_SPARE_SINKS=0";; esac; }
{
for r in 1 2 3 4; do
  order="d s p o"; [ $r = 2 ] && order="o p s d"; [ $r = 3 ] && order="s d o p"; [ $r = 4 ] && order="p o d s"
  for e in $order; do
    echo "== SSB SF20, round $r, setting $e: $(setting $e)"
    env $(setting $e) $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r5/run5-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log5-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r5 run5-ssb20 > $OUT/log5-ssb-ab.txt 2>&1
cat $OUT/log5-ssb-ab.txt
tar -C /tmp/r5 -czf $OUT/run5-json.tgz .
{
for q in q2.1 q2.2 q2.3 q3.1 q3.2 q3.3 q4.1 q4.2 q4.3; do
  echo "== $q"
  f=/tmp/a.sql; sed '/^--/d' benchmarks/ssb/$q.sql > $f; sed '/^--/d' benchmarks/ssb/$q.sql >> $f; echo "EXPLAIN ANALYZE" >> $f; sed '/^--/d' benchmarks/ssb/$q.sql >> $f
  $X --format csv --data-dir /tmp/td20/bench/ssb-sf20 sql $f 2>&1 | grep -E "pipeline [0-9]+ \\[GPU\\]|GPU kernels" | grep -v "build cache at" | sed -E 's/; (sink|start|kernel queued|launched|columns found|outputs|parameters)[^;)]*//g'
done
} > $OUT/log5-analyze.txt 2>&1
grep -E "^==|rows in, [0-9]+ rows out, kernel 0.0" $OUT/log5-analyze.txt | cut -c1-90
date -u
