#!/usr/bin/env bash
# Run 6 of 2026-11-28e, run 5's pack (the final code): TPC-H SF10 with the defaults against
# TESSERA_EXP_SMALL_SORT_MAX=0 TESSERA_EXP_SPARE_SINKS=0, 3 warm runs, one process each;
# then random queries (difftest) with the defaults, seeds 2030-2037 (six narrowed, two
# plain), 120 s each, at once.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
mkdir -p /tmp/r6
$X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1
{
for r in 1; do
  order="1 0"; [ $r = 2 ] && order="0 1"
  for e in $order; do
    echo "== TPC-H SF10, round $r, new=$e"
    if [ $e = 1 ]; then env=""; else env="TESSERA_EXP_SMALL_SORT_MAX=0 TESSERA_EXP_SPARE_SINKS=0"; fi
    env $env $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --json /tmp/r6/run6-tpch10-r$r-e$e.json 2>&1 | grep -E "^│ (total|q)"
  done
done
} > $OUT/log6-tpch-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r6 run6-tpch10 > $OUT/log6-tpch-ab.txt 2>&1
tail -4 $OUT/log6-tpch-ab.txt
tar -C /tmp/r6 -czf $OUT/run6-json.tgz .
SEEDS=8 SEED0=2029 NARROW_SEEDS=6 DIFFTEST_SECONDS=120 bash $S difftests > $OUT/log6-difftests.txt 2>&1
tail -12 $OUT/log6-difftests.txt
date -u
