#!/usr/bin/env bash
# Run 9 of 2026-11-28e, the pack of 12a7cfb (one device function makes a group's record
# for tessera_small_records and tessera_small_sorted_records): GPU unit tests; SSB SF1
# and TPC-H SF1 answers checked (the last of 3 runs); gpu_repeats.slt (before and after
# its overflow) on the GPU and the CPU backend.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
{
echo "== GPU unit tests"
OUT=/tmp/x9 bash $S tests 2>&1 | grep -E "test result|FAILED|panicked"
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
} > $OUT/log9-checks.txt 2>&1
cat $OUT/log9-checks.txt
date -u
