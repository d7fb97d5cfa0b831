#!/usr/bin/env bash
# Run 8 of 2026-11-28b, after the bit-packed columns' width check moved into the parallel
# packing: GPU unit tests; the first query in a new process as in run 7 (SSB SF20 q1.1 and
# q4.3, narrowed against TESSERA_EXP_NARROW_BITS=8, alternating, 3 each); SSB SF1 answers
# checked under =8.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/log8-tests.txt
bash $S tests >> $OUT/log8-tests.txt 2>&1
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
done > $OUT/log8-cold.txt 2>&1
{
echo "== SSB SF1 answers checked under TESSERA_EXP_NARROW_BITS=8 (lines without a check mark only)"
TESSERA_EXP_NARROW_BITS=8 $X --data-dir /tmp/tdssb1 bench ssb --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8
} > $OUT/log8-sf1.txt 2>&1
cat $OUT/log8-cold.txt
