#!/usr/bin/env bash
# Run 5 of 2026-11-29 (the pack of 14e5d2f, graph off: TESSERA_EXP_KERNEL_GRAPH=0, as the
# final default): why q3.2, q4.2 and q4.3 spent 2-3x as long as the others over the same
# host steps before their launches in run 1's trace. Each query alone in a traced process
# (30 warm runs), then the whole suite traced, then q3.2 alone with spare sink arrays off.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u
export TESSERA_EXP_KERNEL_GRAPH=0
[ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
T=benchmarks/results/gpu-2026-11-27j/trace.py
mkdir -p /tmp/t5
trace() {  # $1: name, then bench arguments
  local n=$1; shift
  TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --engine tessera "$@" 2>&1 | grep "^trace" | gzip > /tmp/t5/$n.txt.gz
  { python3 $T /tmp/t5/$n.txt.gz; python3 $T --phases /tmp/t5/$n.txt.gz; } > /tmp/t5/$n-table.txt 2>&1
}
for q in q3.1 q3.2 q3.3 q4.1 q4.2 q4.3; do trace alone-$q --runs 30 --queries $q; done
trace suite --runs 15
TESSERA_EXP_SPARE_SINKS=0 trace nospare-q3.2 --runs 30 --queries q3.2
for f in /tmp/t5/*-table.txt; do echo "== $(basename $f -table.txt)"; grep -E "first kernel queued" $f; done > $OUT/log5-phases.txt
cat $OUT/log5-phases.txt
tar -C /tmp -czf $OUT/run5-traces.tgz t5
date -u
