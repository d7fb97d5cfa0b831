#!/usr/bin/env bash
# Run 6 of 2026-11-28f, run 5's pack on a fresh machine: SSB SF20 new (n) against
# TESSERA_EXP_ADMISSION_BUILDS=0 (a), 15 warm runs x 20 rounds in turns; TPC-H SF10 n
# against a, 3 warm runs, a process each, two rounds.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
($X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1) &
[ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
mkdir -p /tmp/r6 /tmp/r6h
wait
{
for r in $(seq 1 20); do
  order="n a"; [ $((r % 2)) = 0 ] && order="a n"
  for e in $order; do
    env=""; [ $e = a ] && env="TESSERA_EXP_ADMISSION_BUILDS=0"
    echo "== SSB SF20, round $r, setting $e"
    env $env $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r6/run6-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
for r in 1 2; do
  order="n a"; [ $r = 2 ] && order="a n"
  for e in $order; do
    env=""; [ $e = a ] && env="TESSERA_EXP_ADMISSION_BUILDS=0"
    echo "== TPC-H SF10, round $r, setting $e"
    env $env $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --json /tmp/r6h/run6-tpch10-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log6-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r6 run6-ssb20 > $OUT/log6-ssb-ab.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r6h run6-tpch10 > $OUT/log6-tpch-ab.txt 2>&1
cat $OUT/log6-ssb-ab.txt; tail -3 $OUT/log6-tpch-ab.txt
tar -C /tmp -czf $OUT/run6-json.tgz r6 r6h
date -u
