#!/usr/bin/env bash
# Run 1 of 2026-12-01f (a table goes up compact by default where its columns plain take
# more than a quarter of the GPU memory limit, gpu::COMPACT_TABLE_SHARE = 4; half before).
# GPU unit tests; SSB and TPC-H SF 1 answers of the CPU backend, d and c; SSB SF 20 kernel
# times, d and c (2 rounds, 5 EXPLAIN ANALYZE a query); SSB SF 100 kernel times and GPU
# column cache, d (the defaults: now compact) and dN ('never': byte-narrowed, the old
# default) in turns (2 rounds, 3 a query); SSB SF 100 answers with the defaults, 'never'
# and the CPU backend compared; TPC-H SF 10, d (1 round, 3 a query).
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
{ bash $S tests answers1; } 2>&1 | grep -vE "^(WARNING|ERROR).*(whl|pip|site)" > $OUT/log1-tests.txt
VARIANTS="d c:always" SF=20 ROUNDS=2 bash $S variants > $OUT/log1-20.txt 2>&1
mkdir -p $OUT/r1 && mv $OUT/medians-* $OUT/r1/ && gzip -c $OUT/variants-ssb20.txt > $OUT/r1/variants-ssb20.txt.gz && rm -f $OUT/variants-*
rm -rf /tmp/tdv-ssb20
VARIANTS="d dN:never" SF=100 ROUNDS=2 RUNS=3 bash $S variants > $OUT/log1-100.txt 2>&1
mv $OUT/medians-* $OUT/r1/ && gzip -c $OUT/variants-ssb100.txt > $OUT/r1/variants-ssb100.txt.gz && rm -f $OUT/variants-*
f=/tmp/all100.sql; : > $f
for p in benchmarks/ssb/q*.sql; do echo "$(sed '/^--/d' $p | tr '\n' ' ' | sed 's/;\s*$//');" >> $f; done
$X --format csv --data-dir /tmp/tdv-ssb100 sql $f > /tmp/ssb100-d.out 2>&1
$X --format csv --data-dir /tmp/tdv-ssb100 sql <(echo "SET tessera.gpu_compact_tables = 'never';"; cat $f) > /tmp/ssb100-n.out 2>&1
/usr/bin/time -f "CPU backend %e s" $X --format csv --data-dir /tmp/tdv-ssb100 sql <(echo "SET tessera.device = 'cpu';"; cat $f) > /tmp/ssb100-cpu.out 2> /tmp/ssb100-cpu.time
{ cat /tmp/ssb100-cpu.time
  for m in d n; do echo "== SSB SF100 $m against the CPU backend: $(wc -l < /tmp/ssb100-cpu.out) lines, $(diff /tmp/ssb100-cpu.out /tmp/ssb100-$m.out | grep -c '^[<>]') differ"; done
  gzip -c /tmp/ssb100-d.out > $OUT/r1/ssb100-answers-d.csv.gz; } > $OUT/log1-answers100.txt 2>&1
VARIANTS="d" SUITE=tpch SF=10 ROUNDS=1 RUNS=3 bash $S variants > $OUT/log1-tpch10.txt 2>&1
mv $OUT/medians-* $OUT/r1/ && gzip -c $OUT/variants-tpch10.txt > $OUT/r1/variants-tpch10.txt.gz && rm -f $OUT/variants-*
tail -8 $OUT/log1-tests.txt; cat $OUT/log1-answers100.txt; grep -hE "gen --load" $OUT/log1-*.txt; cat $OUT/r1/medians-*
date -u
