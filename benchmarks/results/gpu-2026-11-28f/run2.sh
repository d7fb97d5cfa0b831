#!/usr/bin/env bash
# Run 2 of 2026-11-28f: the pack of 2026-11-28f's first commit (2026-11-28e's binary did
# not fit beside it in what a device run carries). Checks first: GPU unit tests, SF1
# answers (the last of 3 runs), gpu_repeats.slt and gpu_build_cache.slt on both backends,
# the ten GPU-result slt files. Then SSB SF20, 15 warm runs x 12 rounds in turns: new (n),
# new with TESSERA_EXP_TEARDOWN=0 (t); then 5 rounds of the experiments:
# TESSERA_EXP_CTX_SCHED=spin (s) and =blocking (b), TESSERA_EXP_BATCHED_BITMAP_KIB=128 (m)
# against new (n). q3.1's kernels dumped (TESSERA_DUMP_KERNELS); one traced process.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
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
mkdir -p /tmp/x1r
OUT=/tmp/x1r bash $S results 2>&1 | grep -hE "identical|errors"
} > $OUT/log2-checks.txt 2>&1
grep -vE "^ok|^[0-9]|^test |^running|^$" $OUT/log2-checks.txt | tail -25
wait
tail -2 /tmp/gen20.txt
mkdir -p /tmp/r2 /tmp/r2x
run() { # setting round dir
  case $1 in n) b=$X; env="";; t) b=$X; env="TESSERA_EXP_TEARDOWN=0";;
    s) b=$X; env="TESSERA_EXP_CTX_SCHED=spin";; b) b=$X; env="TESSERA_EXP_CTX_SCHED=blocking";; m) b=$X; env="TESSERA_EXP_BATCHED_BITMAP_KIB=128";; esac
  echo "== SSB SF20, round $2, setting $1"
  env $env $b --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json $3/run2-ssb20-r$2-e$1.json 2>&1 | grep -E "^│ total"
}
{
for r in $(seq 1 12); do
  case $((r % 2)) in 0) order="n t";; 1) order="t n";; esac
  for e in $order; do run $e $r /tmp/r2; done
done
for r in $(seq 1 5); do
  case $((r % 2)) in 0) order="n s b m";; 1) order="m b s n";; esac
  for e in $order; do run $e $r /tmp/r2x; done
done
} > $OUT/log2-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r2 run2-ssb20 > $OUT/log2-ssb-ab.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r2x run2-ssb20 > $OUT/log2-exp-ab.txt 2>&1
cat $OUT/log2-ssb-ab.txt $OUT/log2-exp-ab.txt
mkdir -p /tmp/kd
TESSERA_DUMP_KERNELS=/tmp/kd $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q3.1 > /dev/null 2>&1
TESSERA_DUMP_KERNELS=/tmp/kd/m TESSERA_EXP_BATCHED_BITMAP_KIB=128 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q3.1 > /dev/null 2>&1
ls -la /tmp/kd /tmp/kd/m
T=benchmarks/results/gpu-2026-11-27j/trace.py
TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera 2>&1 | grep "^trace" | gzip > $OUT/log2-trace.txt.gz
{ python3 $T $OUT/log2-trace.txt.gz; python3 $T --phases $OUT/log2-trace.txt.gz; } > $OUT/log2-trace-table.txt 2>&1
grep "^sum over" $OUT/log2-trace-table.txt
tar -C /tmp -czf $OUT/run2-json-kernels.tgz r2 r2x kd
date -u
