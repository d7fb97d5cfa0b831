#!/usr/bin/env bash
# Run 1 of 2026-11-28f, 2026-11-28e's last pack (12a7cfb): does the host time beside the
# kernels depend on where the OS runs the query's thread? SSB SF20, 15 warm runs x 6
# rounds in turns: the process unpinned (0), pinned to one core (1: taskset -c 2), to
# four (4: taskset -c 2-5). Then one traced process of 30 warm runs unpinned and one
# pinned to one core: each step's median time (../gpu-2026-11-27j/trace.py).
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
nproc; lscpu | grep -E "Model name|Socket|NUMA node|Thread" | head -6
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
date -u
mkdir -p /tmp/r1
{
for r in $(seq 1 6); do
  for e in 0 1 4; do
    case $e in 0) pin="";; 1) pin="taskset -c 2";; 4) pin="taskset -c 2-5";; esac
    echo "== SSB SF20, round $r, pin=$e"
    $pin $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r1/run1-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log1-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r1 run1-ssb20 > $OUT/log1-ssb-ab.txt 2>&1
cat $OUT/log1-ssb-ab.txt
T=benchmarks/results/gpu-2026-11-27j/trace.py
for e in 0 1; do
  pin=""; [ $e = 1 ] && pin="taskset -c 2"
  TESSERA_TRACE_HOST=1 $pin $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 30 --engine tessera 2>&1 | grep "^trace" | gzip > $OUT/log1-trace-e$e.txt.gz
  { python3 $T $OUT/log1-trace-e$e.txt.gz; python3 $T --phases $OUT/log1-trace-e$e.txt.gz; } > $OUT/log1-trace-table-e$e.txt 2>&1
  echo "== pin=$e"; grep "^sum over" $OUT/log1-trace-table-e$e.txt
done
tar -C /tmp/r1 -czf $OUT/run1-json.tgz .
date -u
