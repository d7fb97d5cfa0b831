#!/usr/bin/env bash
# Run 8 of 2026-11-28e, run 5's pack on its machine: one traced SSB SF20 process
# (TESSERA_TRACE_HOST=1, 8 warm runs) with the defaults and one with
# TESSERA_EXP_SMALL_SORT_MAX=0 TESSERA_EXP_SPARE_SINKS=0: each step's median time after
# the one before it, and the phases (../gpu-2026-11-27j/trace.py).
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
T=benchmarks/results/gpu-2026-11-27j/trace.py
for e in 1 0; do
  if [ $e = 1 ]; then env=""; else env="TESSERA_EXP_SMALL_SORT_MAX=0 TESSERA_EXP_SPARE_SINKS=0"; fi
  env $env TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 8 --engine tessera 2>&1 | grep "^trace" | gzip > $OUT/log8-trace-e$e.txt.gz
  { python3 $T $OUT/log8-trace-e$e.txt.gz; python3 $T --phases $OUT/log8-trace-e$e.txt.gz; } > $OUT/log8-trace-table-e$e.txt 2>&1
  echo "== new=$e"; grep "^sum over" $OUT/log8-trace-table-e$e.txt
done
date -u
