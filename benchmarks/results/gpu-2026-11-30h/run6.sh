#!/usr/bin/env bash
# Run 6 of 2026-11-30h (pack B): the SSB SF 20 kernels as generated over compact columns
# ('always'), with the compact cuts (c) and without (c0, TESSERA_EXP_COMPACT_CUTS=0), their
# sources written by TESSERA_DUMP_KERNELS (the kernel cache emptied first), to compare
# q4.2's (slower with the cuts in run 5).
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
P=/tmp/td20/bench/ssb-sf20
grep -q lineorder $P/manifest.json 2>/dev/null || { rm -rf /tmp/td20; $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1; }
for v in c c0; do
  cuts=1; [ $v = c0 ] && cuts=0
  for q in q2.1 q3.2 q4.2 q4.3; do
    rm -rf $P/kernels; mkdir -p $OUT/kernels-$v/$q
    echo "SET tessera.gpu_compact_tables = 'always'; $(sed '/^--/d' benchmarks/ssb/$q.sql | tr '\n' ' ')" > /tmp/k.sql
    TESSERA_EXP_COMPACT_CUTS=$cuts TESSERA_DUMP_KERNELS=$OUT/kernels-$v/$q $X --format csv --data-dir $P sql /tmp/k.sql > /dev/null 2>&1
  done
done
cd $OUT && tar -czf kernels-run6.tgz kernels-c kernels-c0 && rm -rf kernels-c kernels-c0 && ls -la
