#!/usr/bin/env bash
# Run 5 of 2026-11-28f, the pack of the second commit (cached builds taken at admission;
# the teardown thread and the two kernel/driver switches dropped): GPU unit tests; SF1
# answers (the last of 3 runs); gpu_repeats.slt in two processes a backend (before and
# after its overflow), gpu_build_cache.slt and the ten GPU-result slt files on both
# backends; EXPLAIN ANALYZE of q2.1 (second run); SSB SF20 new (n) against
# TESSERA_EXP_ADMISSION_BUILDS=0 (a), 15 warm runs x 14 rounds in turns; one traced
# process; random queries, seeds 2038-2045 (six narrowed, two plain), 100 s each.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
[ -d /tmp/td20 ] || ($X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /tmp/gen20.txt 2>&1) &
{
echo "== GPU unit tests"
OUT=/tmp/x1 bash $S tests 2>&1
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
slt=gpu_build_cache
awk '/^(statement|query)/{on=1; buf=""; next} on&&(/^----$/||/^$/){if(buf!="") print buf ";"; on=0; next} on{buf=buf (buf==""?"":" ") $0} END{if(on&&buf!="") print buf ";"}' tests/slt/$slt.slt | grep -v "^SET tessera.device" > /tmp/$slt.sql
for dev in gpu cpu; do
  rm -rf /tmp/td$slt-$dev
  (echo "SET tessera.device = '$dev';"; cat /tmp/$slt.sql) > /tmp/$slt-$dev.sql
  $X --format csv --data-dir /tmp/td$slt-$dev sql /tmp/$slt-$dev.sql > /tmp/$slt-$dev.txt 2>&1
done
cmp /tmp/$slt-gpu.txt /tmp/$slt-cpu.txt && echo "$slt: GPU and CPU answers identical ($(wc -l < /tmp/$slt-gpu.txt) lines, $(grep -ci rror /tmp/$slt-gpu.txt) errors)"
mkdir -p /tmp/x1r
OUT=/tmp/x1r bash $S results 2>&1 | grep -hE "identical|errors"
} > $OUT/log5-checks.txt 2>&1
grep -vE "^ok|^[0-9]|^test |^running|^$" $OUT/log5-checks.txt | tail -28
wait
cat > /tmp/q21.sql <<'SQL'
SELECT sum(lo_revenue), d_year, p_brand1 FROM lineorder, date, part, supplier WHERE lo_orderdate = d_datekey AND lo_partkey = p_partkey AND lo_suppkey = s_suppkey AND p_category = 'MFGR#12' AND s_region = 'AMERICA' GROUP BY d_year, p_brand1 ORDER BY d_year, p_brand1;
EXPLAIN ANALYZE SELECT sum(lo_revenue), d_year, p_brand1 FROM lineorder, date, part, supplier WHERE lo_orderdate = d_datekey AND lo_partkey = p_partkey AND lo_suppkey = s_suppkey AND p_category = 'MFGR#12' AND s_region = 'AMERICA' GROUP BY d_year, p_brand1 ORDER BY d_year, p_brand1;
SQL
$X --data-dir /tmp/td20/bench/ssb-sf20 sql /tmp/q21.sql 2>&1 | grep -iE "pipeline|admitted|build cache|GPU kernels" > $OUT/log5-analyze.txt
cat $OUT/log5-analyze.txt
mkdir -p /tmp/r5
{
for r in $(seq 1 14); do
  order="n a"; [ $((r % 2)) = 0 ] && order="a n"
  for e in $order; do
    env=""; [ $e = a ] && env="TESSERA_EXP_ADMISSION_BUILDS=0"
    echo "== SSB SF20, round $r, setting $e"
    env $env $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r5/run5-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log5-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r5 run5-ssb20 > $OUT/log5-ssb-ab.txt 2>&1
cat $OUT/log5-ssb-ab.txt
T=benchmarks/results/gpu-2026-11-27j/trace.py
TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera 2>&1 | grep "^trace" | gzip > /tmp/log5-trace.txt.gz
{ python3 $T /tmp/log5-trace.txt.gz; python3 $T --phases /tmp/log5-trace.txt.gz; } > $OUT/log5-trace-table.txt 2>&1
grep "^sum over" $OUT/log5-trace-table.txt
SEEDS=8 SEED0=2037 NARROW_SEEDS=6 DIFFTEST_SECONDS=100 bash $S difftests > $OUT/log5-difftests.txt 2>&1
tail -12 $OUT/log5-difftests.txt
cp /tmp/log5-trace.txt.gz $OUT/ 2>/dev/null
tar -C /tmp/r5 -czf $OUT/run5-json.tgz .
date -u
