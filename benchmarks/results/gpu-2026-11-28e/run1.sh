#!/usr/bin/env bash
# Run 1 of 2026-11-28e: GPU unit tests (tessera_small_sorted_records against a stable
# sort on the host among them); SSB SF1 and TPC-H SF1 answers checked (the last of 3
# runs, which take spare sink arrays); gpu_repeats.slt and gpu_build_cache.slt in order
# on the GPU and the CPU backend; the ten GPU-result slt files; then SSB SF20 with the
# defaults against TESSERA_EXP_SMALL_SORT_MAX=0 TESSERA_EXP_SPARE_SINKS=0 (as before),
# 15 warm runs x 4 rounds in turns. At most 8 files come back: logs are bundled.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
# SSB SF20's store, generated while the checks run.
($X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /tmp/gen20.txt 2>&1) &
{
echo "== GPU unit tests"
OUT=/tmp/x1 bash $S tests 2>&1
echo "== SF1 answers checked (the last of 3 runs); lines without a check mark only"
for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 3 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
for slt in gpu_repeats gpu_build_cache; do
  awk '/^(statement|query)/{on=1; buf=""; next} on&&(/^----$/||/^$/){if(buf!="") print buf ";"; on=0; next} on{buf=buf (buf==""?"":" ") $0} END{if(on&&buf!="") print buf ";"}' tests/slt/$slt.slt | grep -v "^SET tessera.device" > /tmp/$slt.sql
  for dev in gpu cpu; do
    rm -rf /tmp/td$slt-$dev
    (echo "SET tessera.device = '$dev';"; cat /tmp/$slt.sql) > /tmp/$slt-$dev.sql
    $X --format csv --data-dir /tmp/td$slt-$dev sql /tmp/$slt-$dev.sql > /tmp/$slt-$dev.txt 2>&1
  done
  cmp /tmp/$slt-gpu.txt /tmp/$slt-cpu.txt && echo "$slt: GPU and CPU answers identical ($(wc -l < /tmp/$slt-gpu.txt) lines, $(grep -ci rror /tmp/$slt-gpu.txt) errors)"
done
cat /tmp/gpu_repeats-gpu.txt
mkdir -p /tmp/x1r
OUT=/tmp/x1r bash $S results 2>&1 | grep -hE "identical|errors"
} > $OUT/log1-checks.txt 2>&1
cat $OUT/log1-checks.txt | grep -vE "^ok|^[0-9]"
wait
tail -3 /tmp/gen20.txt
mkdir -p /tmp/r1
{
for r in 1 2 3 4; do
  order="1 0"; [ $((r % 2)) = 0 ] && order="0 1"
  for e in $order; do
    echo "== SSB SF20, round $r, new=$e"
    if [ $e = 1 ]; then env=""; else env="TESSERA_EXP_SMALL_SORT_MAX=0 TESSERA_EXP_SPARE_SINKS=0"; fi
    env $env $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r1/run1-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log1-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r1 run1-ssb20 > $OUT/log1-ssb-ab.txt 2>&1
cat $OUT/log1-ssb-ab.txt
tar -C /tmp/r1 -czf $OUT/run1-json.tgz .
date -u
