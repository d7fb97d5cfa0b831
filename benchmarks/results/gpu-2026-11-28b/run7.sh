#!/usr/bin/env bash
# Run 7 of 2026-11-28b: the first query in a new process (kernel disk cache warm), SSB
# SF20 q1.1 and q4.3, narrowed (the default) against bit-packed columns
# (TESSERA_EXP_NARROW_BITS=8, packed on the host before the upload), alternating, 3 each.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
S20=/tmp/td20/bench/ssb-sf20
[ -d $S20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera 2>&1 | tail -1
for q in q1.1 q4.3; do
  for i in 1 2 3; do
    for b in 0 8; do
      s=$(date +%s.%N)
      TESSERA_EXP_NARROW_BITS=$b $X --format csv --data-dir $S20 -c "$(sed '/^--/d' benchmarks/ssb/$q.sql)" > /tmp/cold.txt 2>&1
      e=$(date +%s.%N)
      echo "$q NARROW_BITS=$b run $i: $(python3 -c "print(round($e - $s, 3))") s $(grep -ciE 'rror' /tmp/cold.txt) errors"
    done
  done
done > $OUT/log7-cold.txt 2>&1
cat $OUT/log7-cold.txt
