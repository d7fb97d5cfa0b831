#!/usr/bin/env bash
# Run 2 of 2026-11-28g, the pack of fe34fe1 (32-bit rows as signed ints): SSB SF20
# with 32-bit rows (n, the default) against 64-bit (o: TESSERA_EXP_INDEX32=0), 15 warm
# runs x 10 rounds in turns; SSB SF20 timed to the batches (n) against timed after the
# GPU report is read, as before (r: TESSERA_EXP_REPORT_TIMED=1), 5 rounds; EXPLAIN ANALYZE of every query
# with 0 (per pipeline) and 4 items a thread; TPC-H SF10 n against o, 3 warm runs x 2
# rounds; one traced process; random queries, seeds
# 2062-2069 (six narrowed, two plain), 110 s each.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
[ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
([ -d /tmp/tdh10 ] || $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1) &
mkdir -p /tmp/r2 /tmp/r2t /tmp/r2h
{
for r in $(seq 1 10); do
  order="n o"; [ $((r % 2)) = 0 ] && order="o n"
  for e in $order; do
    env=""; [ $e = o ] && env="TESSERA_EXP_INDEX32=0"
    echo "== SSB SF20, round $r, setting $e"
    env $env $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r2/run2-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
for r in $(seq 1 5); do
  order="n r"; [ $((r % 2)) = 0 ] && order="r n"
  for e in $order; do
    env=""; [ $e = r ] && env="TESSERA_EXP_REPORT_TIMED=1"
    echo "== SSB SF20 timing, round $r, setting $e"
    env $env $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r2t/run2t-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
wait
for r in 1 2; do
  order="n o"; [ $r = 2 ] && order="o n"
  for e in $order; do
    env=""; [ $e = o ] && env="TESSERA_EXP_INDEX32=0"
    echo "== TPC-H SF10, round $r, setting $e"
    env $env $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --json /tmp/r2h/run2-tpch10-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log2-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r2h run2-tpch10 > $OUT/log2-tpch-ab.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r2 run2-ssb20 > $OUT/log2-ssb-ab.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r2t run2t-ssb20 > $OUT/log2-timing-ab.txt 2>&1
cat $OUT/log2-ssb-ab.txt; tail -1 $OUT/log2-tpch-ab.txt; tail -1 $OUT/log2-timing-ab.txt; head -2 $OUT/log2-timing-ab.txt
{
for it in 0 4; do
  f=/tmp/analyze-$it.sql
  echo "SET tessera.gpu_items_per_thread = $it;" > $f
  for q in benchmarks/ssb/q*.sql; do sed '/^--/d' $q >> $f; sed '/^--/d' $q >> $f; echo "EXPLAIN ANALYZE" >> $f; sed '/^--/d' $q >> $f; done
  echo "== EXPLAIN ANALYZE, items $it"
  $X --format csv --data-dir /tmp/td20/bench/ssb-sf20 sql $f 2>&1 | grep -oE "GPU kernels: [0-9.]+ ms|rror.*"
done
} > $OUT/log2-items.txt 2>&1
paste <(sed -n 2,14p $OUT/log2-items.txt) <(sed -n 16,28p $OUT/log2-items.txt)
T=benchmarks/results/gpu-2026-11-27j/trace.py
TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera 2>&1 | grep "^trace" | gzip > $OUT/log2-trace.txt.gz
{ python3 $T $OUT/log2-trace.txt.gz; python3 $T --phases $OUT/log2-trace.txt.gz; } > $OUT/log2-trace-table.txt 2>&1
grep "^sum over" $OUT/log2-trace-table.txt
SEEDS=8 SEED0=2061 NARROW_SEEDS=6 DIFFTEST_SECONDS=110 bash $S difftests > $OUT/log2-difftests.txt 2>&1
tail -4 $OUT/log2-difftests.txt
tar -C /tmp -czf $OUT/run2-json.tgz r2 r2t r2h
date -u
