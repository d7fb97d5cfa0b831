#!/usr/bin/env bash
# Run 3 of 2026-11-28g, the final pack (lean pipelines keep 64-bit rows): GPU unit tests;
# SF1 answers, gpu_repeats and gpu_build_cache on both backends (gpu-suite.sh answers);
# the ten GPU-result slt files; SSB SF20 new (n) against TESSERA_EXP_INDEX32=0 (o), 15
# warm runs x 10 rounds in turns; TPC-H SF10 n against o, 3 warm runs x 2 rounds; one
# traced process; random queries, seeds 2070-2077 (six narrowed, two plain), 110 s each.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
( [ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /tmp/gen20.txt 2>&1
  [ -d /tmp/tdh10 ] || $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /tmp/genh10.txt 2>&1 ) &
{
echo "== GPU unit tests"
OUT=/tmp/x1 bash $S tests 2>&1
echo "== answers"
OUT=/tmp/x1a bash $S answers 2>&1
mkdir -p /tmp/x1r
OUT=/tmp/x1r bash $S results 2>&1 | grep -hE "identical|errors"
} > $OUT/log3-checks.txt 2>&1
grep -vE "^ok|^[0-9]|^test |^running|^$" $OUT/log3-checks.txt | grep -E "test result|identical|✗|rror|FAIL|total" | tail -30
wait
mkdir -p /tmp/r3 /tmp/r3h
{
for r in $(seq 1 10); do
  order="n o"; [ $((r % 2)) = 0 ] && order="o n"
  for e in $order; do
    env=""; [ $e = o ] && env="TESSERA_EXP_INDEX32=0"
    echo "== SSB SF20, round $r, setting $e"
    env $env $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r3/run3-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
for r in 1 2; do
  order="n o"; [ $r = 2 ] && order="o n"
  for e in $order; do
    env=""; [ $e = o ] && env="TESSERA_EXP_INDEX32=0"
    echo "== TPC-H SF10, round $r, setting $e"
    env $env $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --json /tmp/r3h/run3-tpch10-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log3-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r3 run3-ssb20 > $OUT/log3-ssb-ab.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r3h run3-tpch10 > $OUT/log3-tpch-ab.txt 2>&1
cat $OUT/log3-ssb-ab.txt; tail -1 $OUT/log3-tpch-ab.txt
T=benchmarks/results/gpu-2026-11-27j/trace.py
TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera 2>&1 | grep "^trace" | gzip > /tmp/log3-trace.txt.gz
{ python3 $T /tmp/log3-trace.txt.gz; python3 $T --phases /tmp/log3-trace.txt.gz; } > $OUT/log3-trace-table.txt 2>&1
grep "^sum over" $OUT/log3-trace-table.txt
SEEDS=8 SEED0=2069 NARROW_SEEDS=6 DIFFTEST_SECONDS=110 bash $S difftests > $OUT/log3-difftests.txt 2>&1
tail -3 $OUT/log3-difftests.txt
tar -C /tmp -czf $OUT/run3-json.tgz r3 r3h log3-trace.txt.gz
date -u
