#!/usr/bin/env bash
# Run 4 of 2026-11-28f, run 2's pack on run 3's machine, teardown thread off: mimalloc's
# purge delay again, over more rounds: as is (d), MIMALLOC_PURGE_DELAY=-1 (p), =1000 ms
# (s), 15 warm runs x 10 rounds in turns. Then q3.1's kernels dumped with the store's
# kernel cache moved aside (run 3 looked for it in the wrong folder).
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
export TESSERA_EXP_TEARDOWN=0
[ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
rm -rf /tmp/r4; mkdir -p /tmp/r4
{
for r in $(seq 1 10); do
  case $((r % 3)) in 0) order="d p s";; 1) order="p s d";; 2) order="s d p";; esac
  for e in $order; do
    case $e in d) env="";; p) env="MIMALLOC_PURGE_DELAY=-1";; s) env="MIMALLOC_PURGE_DELAY=1000";; esac
    echo "== SSB SF20, round $r, setting $e"
    env $env $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r4/run4-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log4-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r4 run4-ssb20 > $OUT/log4-ssb-ab.txt 2>&1
cat $OUT/log4-ssb-ab.txt
K=$(find /tmp/td20 -maxdepth 3 -type d -name kernels | head -1); echo "kernel cache: $K"
mv $K /tmp/kcache-aside
mkdir -p /tmp/kd
TESSERA_DUMP_KERNELS=/tmp/kd $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q3.1 > /dev/null 2>&1
rm -rf $K; mv /tmp/kcache-aside $K
ls -la /tmp/kd
tar -C /tmp -czf $OUT/run4-json-kernels.tgz r4 kd
date -u
