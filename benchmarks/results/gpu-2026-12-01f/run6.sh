#!/usr/bin/env bash
# Run 6 of 2026-12-01f (the pack of run 5): SSB SF 100's first query q1.1 traced
# (TESSERA_TRACE_HOST=1, `tessera bench`, a new process), twice, the whole trace kept
# (run 5 cut it).
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
ST=/tmp/td100/bench/ssb-sf100
grep -q lineorder $ST/manifest.json 2>/dev/null || { rm -rf /tmp/td100; mkdir -p /tmp/td100/bench; $X --data-dir $ST gen ssb --sf 100 --load > /dev/null 2>&1; }
for r in 1 2; do
  TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td100 bench ssb --sf 100 --runs 1 --engine tessera --queries q1.1 2>&1 | grep -E "^trace" | head -1 > $OUT/log6-trace-$r.txt
done
for r in 1 2; do tr ' ' '\n' < $OUT/log6-trace-$r.txt | grep -E "GPU pipeline|column|distances|packed|runs|found" | tail -22; done
