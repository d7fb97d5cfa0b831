#!/usr/bin/env bash
# Run 1 of 2026-12-01e (pack A: hoisted tests ordered by cost over the rows they drop,
# a bitmap read from L2 costing probe::L2_BITMAP_COST = 4 tests of one in L1). GPU unit
# tests; SSB and TPC-H SF 1 answers of the CPU backend, d and c; SSB SF 20 kernel times
# (3 rounds, 5 EXPLAIN ANALYZE a query) in turns: d, dB1, c, cB1 (B1:
# TESSERA_EXP_BITMAP_COST=1, the most selective test first, as before); the SF 20
# kernels' sources, d and c; TPC-H SF 10 kernel times (2 rounds, 3 a query): d, dB1.
S=benchmarks/device/gpu-suite.sh
B1=TESSERA_EXP_BITMAP_COST=1
{ bash $S tests answers1; } 2>&1 | grep -vE "^(WARNING|ERROR).*(whl|pip|site)" > $OUT/log1-tests.txt
VARIANTS="d dB1:$B1 c:always cB1:always,$B1" SF=20 bash $S variants > $OUT/log1-20.txt 2>&1
mkdir -p $OUT/r1 && mv $OUT/medians-* $OUT/r1/ && gzip -c $OUT/variants-ssb20.txt > $OUT/r1/variants-ssb20.txt.gz && rm -f $OUT/variants-*
X=/tmp/tessera-gpu/bin/tessera
f=/tmp/all20.sql; : > $f
for p in benchmarks/ssb/q*.sql; do echo "$(sed '/^--/d' $p | tr '\n' ' ' | sed 's/;\s*$//');" >> $f; done
rm -rf /tmp/tdv-ssb20/kernels
TESSERA_DUMP_KERNELS=$OUT/k20d $X --format csv --data-dir /tmp/tdv-ssb20 sql $f > /dev/null 2>&1
rm -rf /tmp/tdv-ssb20/kernels
( echo "SET tessera.gpu_compact_tables = 'always';"; cat $f ) > /tmp/all20c.sql
TESSERA_DUMP_KERNELS=$OUT/k20c $X --format csv --data-dir /tmp/tdv-ssb20 sql /tmp/all20c.sql > /dev/null 2>&1
tar -C $OUT -czf $OUT/kernels-sf20-run1.tgz k20d k20c && rm -rf $OUT/k20d $OUT/k20c
rm -rf /tmp/tdv-ssb20
VARIANTS="d dB1:$B1" SUITE=tpch SF=10 ROUNDS=2 RUNS=3 bash $S variants > $OUT/log1-tpch10.txt 2>&1
mv $OUT/medians-* $OUT/r1/ && gzip -c $OUT/variants-tpch10.txt > $OUT/r1/variants-tpch10.txt.gz && rm -f $OUT/variants-*
cat $OUT/log1-tests.txt | tail -30; grep -hE "gen --load" $OUT/log1-*.txt; cat $OUT/r1/medians-*
date -u
