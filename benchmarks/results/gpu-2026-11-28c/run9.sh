#!/usr/bin/env bash
# Run 9 of 2026-11-28c, the pack of 2388946: GPU unit tests (the launch study's among
# them), then `tessera bench launches` in three processes: the host time of queueing a
# query's 1, 2, 5 and 11 kernels one launch at a time (with two timing events each, as
# the executor does, and without), against one CUDA graph captured once, and against a
# graph captured and instantiated for every query; medians of 500 queries a way.
S=benchmarks/device/gpu-suite.sh
bash $S tests > $OUT/log9-tests.txt 2>&1
tail -2 $OUT/log9-tests.txt
X=/tmp/tessera-gpu/bin/tessera
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
for p in 1 2 3; do
  echo "== process $p"
  $X bench launches --json $OUT/run9-launches-p$p.json 2>&1
done > $OUT/log9-launches.txt
cat $OUT/log9-launches.txt
