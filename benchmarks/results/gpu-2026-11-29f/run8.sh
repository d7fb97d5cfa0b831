#!/usr/bin/env bash
# Run 8 of 2026-11-29f: a pack of the final code plus a diagnostic switch, not committed
# (removed after this run): TESSERA_EXP_PAD_PAYLOADS=1 (a narrowed payload
# allocated as many bytes as at its width, so that the arrays after it lie where they
# would without the narrowing). Run 7 found q2.1 with every payload narrowed (n32) as
# slow on a grid of 12 blocks an SM as on its 16, so occupancy does not explain it; here
# n32 with padded payloads (n32pad) against n32 and the defaults (d), for q2.1, q2.2 and
# q3.1: two warm runs then 5 EXPLAIN ANALYZE each, twice in turns.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
[ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
D=/tmp/tdturns20/bench/ssb-sf20
first() { awk 'NR==1{h=$0} NR>1 && $0==h{exit} {print}' "$1"; }
run() {  # $1 query, $2 name, then variables
  local q=$1 e=$2; shift 2
  local query=$(sed '/^--/d' benchmarks/ssb/$q.sql | tr '\n' ' ' | sed 's/;.*//')
  f=/tmp/v.sql; : > $f
  echo "$query;" >> $f; echo "$query;" >> $f
  for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $query;" >> $f; done
  ( for v in "$@"; do export "$v"; done; $X --format csv --data-dir $D sql $f > /tmp/v-$e.txt 2>&1 )
  echo "== $q $e: $(grep -oE 'GPU kernels: [0-9.]+ ms|rror.*' /tmp/v-$e.txt | tr '\n' ' ') answer $(first /tmp/v-$e.txt | md5sum | cut -c1-8) ($(first /tmp/v-$e.txt | wc -l) lines)"
}
for round in 1 2; do
  for q in q2.1 q2.2 q3.1; do
    run $q d
    run $q n32 TESSERA_EXP_NARROW_PAYLOADS=32
    run $q n32pad TESSERA_EXP_NARROW_PAYLOADS=32 TESSERA_EXP_PAD_PAYLOADS=1
  done
done > $OUT/log8-variants.txt 2>&1
cat $OUT/log8-variants.txt
date -u
