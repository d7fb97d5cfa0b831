#!/usr/bin/env bash
# Run 2 of 2026-11-28e, run 1's pack on its machine: SSB SF20 with each change alone,
# in turns, 15 warm runs x 3 rounds: the defaults (d), TESSERA_EXP_SMALL_SORT_MAX=0
# (s: the chain's launches one after the other), TESSERA_EXP_SPARE_SINKS=0 (p: the
# probe's arrays allocated and filled every run), both (o); EXPLAIN ANALYZE of the
# grouped queries with the defaults and with both off; one traced process
# (TESSERA_TRACE_HOST=1, 8 warm runs) with the defaults.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
# gpu_repeats.slt in two processes a backend (`tessera sql` stops at an error): the
# statements before its overflow, then those after it.
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
{ for part in a b; do cmp /tmp/rep-$part-gpu.txt /tmp/rep-$part-cpu.txt && echo "gpu_repeats part $part: GPU and CPU answers identical ($(wc -l < /tmp/rep-$part-gpu.txt) lines, $(grep -ci rror /tmp/rep-$part-gpu.txt) errors)"; done; diff /tmp/rep-a-gpu.txt /tmp/rep-a-cpu.txt | head; cat /tmp/rep-b-gpu.txt; } > $OUT/log2-repeats.txt 2>&1
cat $OUT/log2-repeats.txt
mkdir -p /tmp/r2
setting() { case $1 in d) echo "";; s) echo "TESSERA_EXP_SMALL_SORT_MAX=0";; p) echo "TESSERA_EXP_SPARE_SINKS=0";; o) echo "TESSERA_EXP_SMALL_SORT_MAX=0 TESSERA_EXP_SPARE_SINKS=0";; esac; }
{
for r in 1 2 3; do
  order="d s p o"; [ $r = 2 ] && order="o p s d"; [ $r = 3 ] && order="s d o p"
  for e in $order; do
    echo "== SSB SF20, round $r, setting $e: $(setting $e)"
    env $(setting $e) $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r2/run2-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log2-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r2 run2-ssb20 > $OUT/log2-ssb-ab.txt 2>&1
cat $OUT/log2-ssb-ab.txt
tar -C /tmp/r2 -czf $OUT/run2-json.tgz .
{
for e in d o; do
  for q in q2.1 q2.2 q3.1 q3.2 q4.1 q4.2 q4.3; do
    echo "== $q, setting $e"
    f=/tmp/a.sql; sed '/^--/d' benchmarks/ssb/$q.sql > $f; sed '/^--/d' benchmarks/ssb/$q.sql >> $f; echo "EXPLAIN ANALYZE" >> $f; sed '/^--/d' benchmarks/ssb/$q.sql >> $f
    env $(setting $e) $X --format csv --data-dir /tmp/td20/bench/ssb-sf20 sql $f 2>&1 | grep -E "pipeline [0-9]+ \[GPU\]|GPU kernels" | grep -v "build cache at" | sed -E 's/; (sink|start|kernel queued|launched|columns found|outputs|parameters)[^;)]*//g'
  done
done
} > $OUT/log2-analyze.txt 2>&1
TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 8 --engine tessera 2>&1 | grep "^trace" | gzip > $OUT/log2-trace.txt.gz
python3 benchmarks/results/gpu-2026-11-27j/trace.py $OUT/log2-trace.txt.gz > /tmp/steps.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/trace.py --phases $OUT/log2-trace.txt.gz > /tmp/phases.txt 2>&1
cat /tmp/steps.txt /tmp/phases.txt > $OUT/log2-trace-table.txt
tail -3 /tmp/steps.txt; tail -2 /tmp/phases.txt
date -u
