#!/usr/bin/env bash
# Run 2 of 2026-11-28g, run 1's pack on its machine: SSB SF20 timed to the batches (n,
# the default) against timed after the GPU report is read, as before (r:
# TESSERA_EXP_REPORT_TIMED=1), 15 warm runs x 6 rounds in turns; one traced process;
# EXPLAIN ANALYZE of every query with 0 (per pipeline) and 4 items a thread; random
# queries, seeds 2062-2069 (six narrowed, two plain), 110 s each.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
[ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
SEEDS=8 SEED0=2061 NARROW_SEEDS=6 DIFFTEST_SECONDS=110 bash $S difftests > $OUT/log2-difftests.txt 2>&1 &
mkdir -p /tmp/r2
{
for r in $(seq 1 6); do
  order="n r"; [ $((r % 2)) = 0 ] && order="r n"
  for e in $order; do
    env=""; [ $e = r ] && env="TESSERA_EXP_REPORT_TIMED=1"
    echo "== SSB SF20, round $r, setting $e"
    env $env $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r2/run2-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log2-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r2 run2-ssb20 > $OUT/log2-ssb-ab.txt 2>&1
cat $OUT/log2-ssb-ab.txt
T=benchmarks/results/gpu-2026-11-27j/trace.py
TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera 2>&1 | grep "^trace" | gzip > $OUT/log2-trace.txt.gz
{ python3 $T $OUT/log2-trace.txt.gz; python3 $T --phases $OUT/log2-trace.txt.gz; } > $OUT/log2-trace-table.txt 2>&1
grep "^sum over" $OUT/log2-trace-table.txt
{
for it in 0 4; do
  f=/tmp/analyze-$it.sql
  echo "SET tessera.gpu_items_per_thread = $it;" > $f
  for q in benchmarks/ssb/q*.sql; do sed '/^--/d' $q >> $f; sed '/^--/d' $q >> $f; echo "EXPLAIN ANALYZE" >> $f; sed '/^--/d' $q >> $f; done
  echo "== EXPLAIN ANALYZE, items $it"
  $X --format csv --data-dir /tmp/td20/bench/ssb-sf20 sql $f 2>&1 | grep -oE "pipeline [0-9]+ \[GPU\]: [0-9]+ rows in, [0-9]+ rows out, kernel [0-9.]+ ms|GPU kernels: [0-9.]+ ms|rror.*" | grep -E "GPU kernels|rror"
done
} > $OUT/log2-items.txt 2>&1
cat $OUT/log2-items.txt
wait
tail -4 $OUT/log2-difftests.txt
tar -C /tmp -czf $OUT/run2-json.tgz r2
date -u
