#!/usr/bin/env bash
# Run 2 of 2026-11-29e: run 1's pack. SSB SF 20 q3.1's kernels as compiled (the kernel
# cache moved aside so that they compile and TESSERA_DUMP_KERNELS writes them), then its
# probe with the defaults (d) and with 12 and 16 resident blocks asked of NVRTC
# (b12, b16: TESSERA_EXP_MIN_BLOCKS, registers capped at 40 and 32), two warm runs then
# 5 EXPLAIN ANALYZE each; d's EXPLAIN ANALYZE kept whole.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
[ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
D=/tmp/tdturns20/bench/ssb-sf20
first() { awk 'NR==1{h=$0} NR>1 && $0==h{exit} {print}' "$1"; }
query=$(sed '/^--/d' benchmarks/ssb/q3.1.sql | tr '\n' ' ' | sed 's/;.*//')
rm -rf /tmp/kd; mkdir -p /tmp/kd; mv $D/kernels /tmp/kernels-aside 2>/dev/null
TESSERA_DUMP_KERNELS=/tmp/kd $X --format csv --data-dir $D -c "$query" > /dev/null 2>&1
ls -la /tmp/kd; grep -l "out_a0 +=" /tmp/kd/*.cu | head -1 | xargs -I{} cp {} $OUT/q3.1-sf20-probe.cu
for e in d b12 b16 d; do
  f=/tmp/v.sql; : > $f
  echo "$query;" >> $f; echo "$query;" >> $f
  for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $query;" >> $f; done
  ( case $e in b12) export TESSERA_EXP_MIN_BLOCKS=12;; b16) export TESSERA_EXP_MIN_BLOCKS=16;; esac; $X --format csv --data-dir $D sql $f > /tmp/v-$e.txt 2>&1 )
  echo "== q3.1 $e: $(grep -oE 'GPU kernels: [0-9.]+ ms|rror.*' /tmp/v-$e.txt | tr '\n' ' ') answer $(first /tmp/v-$e.txt | md5sum | cut -c1-8) ($(first /tmp/v-$e.txt | wc -l) lines)"
done > $OUT/log2-variants.txt 2>&1
cat $OUT/log2-variants.txt
cp /tmp/v-d.txt $OUT/log2-explain-d.txt
date -u
