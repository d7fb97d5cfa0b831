#!/usr/bin/env bash
# Run 7 of 2026-11-27 (h), after `words_of` stopped giving u8 columns 3-distance words
# with 3 items a thread: GPU unit tests (word loads with 2, 4, 6 and 8 items); SSB SF1
# and TPC-H SF1 answers checked with the default, then every query again with
# tessera.gpu_items_per_thread = 3, 6 and 8, its output compared with the default's.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
bash $S tests > $OUT/log7-tests.txt 2>&1
{
for s in ssb tpch; do
  echo "== $s SF1 answers checked, the default"
  $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8
  st=/tmp/td${s}1/bench/$s-sf1
  for n in 0 3 6 8; do
    f=/tmp/items$n.sql
    echo "SET tessera.gpu_items_per_thread = $n;" > $f
    for q in benchmarks/$s/q*.sql; do sed '/^--/d' $q >> $f; done
    $X --format csv --data-dir $st sql $f > /tmp/$s-items$n.csv 2>&1
  done
  for n in 3 6 8; do
    if cmp -s /tmp/$s-items0.csv /tmp/$s-items$n.csv; then echo "$s: $n items a thread: output identical to the default's ($(wc -l < /tmp/$s-items0.csv) lines)"; else echo "$s: $n items a thread: OUTPUT DIFFERS"; diff /tmp/$s-items0.csv /tmp/$s-items$n.csv | head -20; fi
  done
  grep -ci "error" /tmp/$s-items0.csv
done
} > $OUT/log7-items.txt 2>&1
ls -la $OUT
