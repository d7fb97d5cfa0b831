#!/usr/bin/env bash
# Run 4 of 2026-11-28g, run 3's pack (the final code) on a fresh machine: SSB SF20 new (n)
# against TESSERA_EXP_INDEX32=0 (o), 15 warm runs x 14 rounds in turns.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
[ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
mkdir -p /tmp/r4
{
for r in $(seq 1 14); do
  order="n o"; [ $((r % 2)) = 0 ] && order="o n"
  for e in $order; do
    env=""; [ $e = o ] && env="TESSERA_EXP_INDEX32=0"
    echo "== SSB SF20, round $r, setting $e"
    env $env $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r4/run4-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log4-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r4 run4-ssb20 > $OUT/log4-ssb-ab.txt 2>&1
cat $OUT/log4-ssb-ab.txt
tar -C /tmp -czf $OUT/run4-json.tgz r4
date -u
