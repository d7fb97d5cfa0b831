#!/usr/bin/env bash
# Run 3 of 2026-11-29b (right after run 2 on its machine, the same pack): SSB SF 20
# alone with the defaults (d), without the lean result columns (x,
# TESSERA_EXP_LEAN_RESULTS=0) and with the bench rendering each run's rows after it (r,
# TESSERA_EXP_ROWS_EACH_RUN=1), each in its own process, 15 warm runs, $ROUNDS (default
# 6) rounds in turns (the order rotating by round), pooled per setting by
# gpu-2026-11-27j/ab_json.py.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u
[ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
mkdir -p /tmp/ab3
for r in $(seq 1 ${ROUNDS:-6}); do
  case $((r % 3)) in 1) order="d x r";; 2) order="x r d";; *) order="r d x";; esac
  for e in $order; do
    ( [ $e = x ] && export TESSERA_EXP_LEAN_RESULTS=0
      [ $e = r ] && export TESSERA_EXP_ROWS_EACH_RUN=1
      echo "== ssb20 $e round $r: $($X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/ab3/ab-ssb20-r$r-e$e.json 2>&1 | grep -E '^│ total')" )
  done
done > $OUT/log3-ab.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/ab3 ab-ssb20 >> $OUT/log3-ab.txt 2>&1
cat $OUT/log3-ab.txt
tar -C /tmp -czf $OUT/run3-json.tgz ab3
date -u
