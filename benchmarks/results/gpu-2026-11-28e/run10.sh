#!/usr/bin/env bash
# Run 10 of 2026-11-28e, run 9's pack (12a7cfb): SSB SF20 with the
# defaults (1) against TESSERA_EXP_SMALL_SORT_MAX=0 TESSERA_EXP_SPARE_SINKS=0 (0), 15
# warm runs x 20 rounds in turns (a warm process takes about 2 s: more rounds average out
# the spread between processes).
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
mkdir -p /tmp/r10
{
for r in $(seq 1 20); do
  order="1 0"; [ $((r % 2)) = 0 ] && order="0 1"
  for e in $order; do
    echo "== SSB SF20, round $r, new=$e"
    if [ $e = 1 ]; then env=""; else env="TESSERA_EXP_SMALL_SORT_MAX=0 TESSERA_EXP_SPARE_SINKS=0"; fi
    env $env $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r10/run10-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log10-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r10 run10-ssb20 > $OUT/log10-ssb-ab.txt 2>&1
cat $OUT/log10-ssb-ab.txt
tar -C /tmp/r10 -czf $OUT/run10-json.tgz .
date -u
