#!/usr/bin/env bash
# Run 5 of 2026-11-28g: whether SSB q3.2's probe (32 registers a thread with 32-bit rows,
# 16 blocks an SM) is slowed by its occupancy: the pipeline kernels' grids capped at 8 and
# 12 blocks an SM (TESSERA_EXP_BLOCKS_PER_SM) against the occupancy calculator's (0), SSB
# SF20 15 warm runs x 6 rounds in turns, and TESSERA_EXP_INDEX32=0 (o) beside them.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
[ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
mkdir -p /tmp/r5
{
for r in $(seq 1 6); do
  case $((r % 4)) in 0) order="0 8 12 o";; 1) order="8 12 o 0";; 2) order="12 o 0 8";; 3) order="o 0 8 12";; esac
  for e in $order; do
    case $e in o) env="TESSERA_EXP_INDEX32=0";; *) env="TESSERA_EXP_BLOCKS_PER_SM=$e";; esac
    echo "== SSB SF20, round $r, setting $e"
    env $env $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r5/run5-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log5-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r5 run5-ssb20 > $OUT/log5-ssb-ab.txt 2>&1
cat $OUT/log5-ssb-ab.txt
tar -C /tmp -czf $OUT/run5-json.tgz r5
date -u
