#!/usr/bin/env bash
# Run 4 of 2026-11-29 (the pack of 14e5d2f, right after run 3 on its machine): SSB SF 20
# alone, the kernel graph (g, the default) against TESSERA_EXP_KERNEL_GRAPH=0 (p), each
# in its own process, 15 warm runs, 8 rounds in turns (the first setting alternating),
# pooled per setting by ab_json.py: run 3's two rounds could not tell them apart.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u
[ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
mkdir -p /tmp/ab4
for r in 1 2 3 4 5 6 7 8; do
  order="d x"; [ $((r % 2)) = 0 ] && order="x d"
  for e in $order; do
    ( [ $e = x ] && export TESSERA_EXP_KERNEL_GRAPH=0
      echo "== ssb20 $e round $r: $($X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/ab4/ab-ssb20-r$r-e$e.json 2>&1 | grep -E '^│ total')" )
  done
done > $OUT/log4-ab.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/ab4 ab-ssb20 >> $OUT/log4-ab.txt 2>&1
cat $OUT/log4-ab.txt
tar -C /tmp -czf $OUT/run4-json.tgz ab4
date -u
