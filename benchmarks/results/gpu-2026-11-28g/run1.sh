#!/usr/bin/env bash
# Run 1 of 2026-11-28g: GPU unit tests; SF1 answers, gpu_repeats and gpu_build_cache on
# both backends (gpu-suite.sh answers, new), the ten GPU-result slt files; SSB SF20 with
# rows counted in 32 bits (n, the default) against 64 (o: TESSERA_EXP_INDEX32=0), 15 warm
# runs x 12 rounds in turns; TPC-H SF10 n against o, 3 warm runs, 2 rounds.
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
} > $OUT/log1-checks.txt 2>&1
grep -vE "^ok|^[0-9]|^test |^running|^$" $OUT/log1-checks.txt | tail -30
wait
mkdir -p /tmp/r1 /tmp/r1h
{
for r in $(seq 1 12); do
  order="n o"; [ $((r % 2)) = 0 ] && order="o n"
  for e in $order; do
    env=""; [ $e = o ] && env="TESSERA_EXP_INDEX32=0"
    echo "== SSB SF20, round $r, setting $e"
    env $env $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r1/run1-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
for r in 1 2; do
  order="n o"; [ $r = 2 ] && order="o n"
  for e in $order; do
    env=""; [ $e = o ] && env="TESSERA_EXP_INDEX32=0"
    echo "== TPC-H SF10, round $r, setting $e"
    env $env $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --json /tmp/r1h/run1-tpch10-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log1-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r1 run1-ssb20 > $OUT/log1-ssb-ab.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r1h run1-tpch10 > $OUT/log1-tpch-ab.txt 2>&1
cat $OUT/log1-ssb-ab.txt; tail -3 $OUT/log1-tpch-ab.txt
tar -C /tmp -czf $OUT/run1-json.tgz r1 r1h
date -u
