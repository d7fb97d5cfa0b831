#!/usr/bin/env bash
# Run 5 of 2026-11-28d, run 3's pack (1fbdd04, the final code: later commits change only
# documents): on another machine, SSB SF20 with the build cache (default) against
# TESSERA_EXP_BUILD_CACHE=0, 15 warm runs x 8 rounds in turns, each in its own process;
# then the ten GPU-result slt files on the GPU and the CPU backend.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
mkdir -p /tmp/r5
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
{
for r in 1 2 3 4 5 6 7 8; do
  order="1 0"; [ $((r % 2)) = 0 ] && order="0 1"
  for e in $order; do
    echo "== SSB SF20, round $r, BUILD_CACHE=$e"
    TESSERA_EXP_BUILD_CACHE=$e $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r5/run5-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log5-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r5 run5-ssb20 > $OUT/log5-ssb-ab.txt 2>&1
cat $OUT/log5-ssb-ab.txt
tar -C /tmp/r5 -czf $OUT/run5-json.tgz .
mkdir -p /tmp/x5
OUT=/tmp/x5 bash $S results > $OUT/log5-results.txt 2>&1
grep -hE "identical|errors" $OUT/log5-results.txt
