#!/usr/bin/env bash
# Run 7 of 2026-11-28e, run 5's pack on run 5's (and 6's) machine: SSB SF20 with the
# defaults (1) against TESSERA_EXP_SMALL_SORT_MAX=0 TESSERA_EXP_SPARE_SINKS=0 (0), 15
# warm runs x 6 rounds in turns.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
mkdir -p /tmp/r7
{
for r in 1 2 3 4 5 6; do
  order="1 0"; [ $((r % 2)) = 0 ] && order="0 1"
  for e in $order; do
    echo "== SSB SF20, round $r, new=$e"
    if [ $e = 1 ]; then env=""; else env="TESSERA_EXP_SMALL_SORT_MAX=0 TESSERA_EXP_SPARE_SINKS=0"; fi
    env $env $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r7/run7-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log7-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r7 run7-ssb20 > $OUT/log7-ssb-ab.txt 2>&1
cat $OUT/log7-ssb-ab.txt
tar -C /tmp/r7 -czf $OUT/run7-json.tgz .
date -u
