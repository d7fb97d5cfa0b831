#!/usr/bin/env bash
# Run 8 of 2026-11-28f, the final pack (`TESSERA_EXP_PLAIN_STRINGS_MAX`: a stored
# dictionary's codes coming back for at most 64 Ki rows made plain strings; build-cache
# keys compared by pointer first; builds taken at admission skipped earlier): GPU unit
# tests; SF1 answers (the last of 3 runs); gpu_repeats.slt in two processes a backend,
# gpu_build_cache.slt and the ten GPU-result slt files on both backends; SSB SF20 new (n)
# against TESSERA_EXP_PLAIN_STRINGS_MAX=0 (s) and against that with
# TESSERA_EXP_ADMISSION_BUILDS=0 too (o), 15 warm runs x 10 rounds in turns; one traced
# process; random queries, seeds 2046-2053 (six narrowed, two plain), 60 s each.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
[ -d /tmp/td20 ] || ($X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /tmp/gen20.txt 2>&1) &
{
echo "== GPU unit tests"
OUT=/tmp/x1 bash $S tests 2>&1
echo "== SF1 answers checked (the last of 3 runs); lines without a check mark only"
for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 3 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
awk '/^(statement|query)/{on=1; buf=""; next} on&&(/^----$/||/^$/){if(buf!="") print buf ";"; on=0; next} on{buf=buf (buf==""?"":" ") $0} END{if(on&&buf!="") print buf ";"}' tests/slt/gpu_repeats.slt | grep -v "^SET tessera.device" > /tmp/rep.sql
n=$(grep -n "SELECT sum(x) FROM o" /tmp/rep.sql | head -1 | cut -d: -f1)
head -n $((n - 1)) /tmp/rep.sql > /tmp/rep-a.sql; tail -n +$((n + 2)) /tmp/rep.sql > /tmp/rep-b.sql
for dev in gpu cpu; do
  rm -rf /tmp/tdrep-$dev
  for part in a b; do
    (echo "SET tessera.device = '$dev';"; cat /tmp/rep-$part.sql) > /tmp/rep-$part-$dev.sql
    $X --format csv --data-dir /tmp/tdrep-$dev sql /tmp/rep-$part-$dev.sql > /tmp/rep-$part-$dev.txt 2>&1
  done
done
for part in a b; do cmp /tmp/rep-$part-gpu.txt /tmp/rep-$part-cpu.txt && echo "gpu_repeats part $part: GPU and CPU answers identical ($(wc -l < /tmp/rep-$part-gpu.txt) lines, $(grep -ci rror /tmp/rep-$part-gpu.txt) errors)"; done
slt=gpu_build_cache
awk '/^(statement|query)/{on=1; buf=""; next} on&&(/^----$/||/^$/){if(buf!="") print buf ";"; on=0; next} on{buf=buf (buf==""?"":" ") $0} END{if(on&&buf!="") print buf ";"}' tests/slt/$slt.slt | grep -v "^SET tessera.device" > /tmp/$slt.sql
for dev in gpu cpu; do
  rm -rf /tmp/td$slt-$dev
  (echo "SET tessera.device = '$dev';"; cat /tmp/$slt.sql) > /tmp/$slt-$dev.sql
  $X --format csv --data-dir /tmp/td$slt-$dev sql /tmp/$slt-$dev.sql > /tmp/$slt-$dev.txt 2>&1
done
cmp /tmp/$slt-gpu.txt /tmp/$slt-cpu.txt && echo "$slt: GPU and CPU answers identical ($(wc -l < /tmp/$slt-gpu.txt) lines, $(grep -ci rror /tmp/$slt-gpu.txt) errors)"
mkdir -p /tmp/x1r
OUT=/tmp/x1r bash $S results 2>&1 | grep -hE "identical|errors"
} > $OUT/log8-checks.txt 2>&1
grep -vE "^ok|^[0-9]|^test |^running|^$" $OUT/log8-checks.txt | tail -28
wait
mkdir -p /tmp/r8
{
for r in $(seq 1 10); do
  case $((r % 3)) in 0) order="n s o";; 1) order="s o n";; 2) order="o n s";; esac
  for e in $order; do
    case $e in n) env="";; s) env="TESSERA_EXP_PLAIN_STRINGS_MAX=0";; o) env="TESSERA_EXP_PLAIN_STRINGS_MAX=0 TESSERA_EXP_ADMISSION_BUILDS=0";; esac
    echo "== SSB SF20, round $r, setting $e"
    env $env $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r8/run8-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log8-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r8 run8-ssb20 > $OUT/log8-ssb-ab.txt 2>&1
cat $OUT/log8-ssb-ab.txt
T=benchmarks/results/gpu-2026-11-27j/trace.py
TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera 2>&1 | grep "^trace" | gzip > $OUT/log8-trace.txt.gz
{ python3 $T $OUT/log8-trace.txt.gz; python3 $T --phases $OUT/log8-trace.txt.gz; } > $OUT/log8-trace-table.txt 2>&1
grep "^sum over" $OUT/log8-trace-table.txt
SEEDS=8 SEED0=2045 NARROW_SEEDS=6 DIFFTEST_SECONDS=60 bash $S difftests > $OUT/log8-difftests.txt 2>&1
tail -4 $OUT/log8-difftests.txt
tar -C /tmp/r8 -czf $OUT/run8-json.tgz .
date -u
