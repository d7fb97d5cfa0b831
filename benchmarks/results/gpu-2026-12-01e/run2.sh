#!/usr/bin/env bash
# Run 2 of 2026-12-01e (pack B: the test every row takes chosen by cost over the rows it
# drops, a bitmap read from L2 costing 4 unless its test empties whole warps; the tests
# after it by selectivity). GPU unit tests; SSB and TPC-H SF 1 answers of the CPU
# backend, d and c; SSB SF 20 kernel times (3 rounds, 5 EXPLAIN ANALYZE a query) in
# turns: d, dB1, c, cB1 (B1: TESSERA_EXP_BITMAP_COST=1, the most selective test first,
# as before); the SF 20 kernels' sources, d and c; TPC-H SF 10 kernel times (2 rounds, 3
# a query): d, dB1.
S=benchmarks/device/gpu-suite.sh
B1=TESSERA_EXP_BITMAP_COST=1
{ bash $S tests answers1; } 2>&1 | grep -vE "^(WARNING|ERROR).*(whl|pip|site)" > $OUT/log2-tests.txt
VARIANTS="d dB1:$B1 c:always cB1:always,$B1" SF=20 bash $S variants > $OUT/log2-20.txt 2>&1
mkdir -p $OUT/r2 && mv $OUT/medians-* $OUT/r2/ && gzip -c $OUT/variants-ssb20.txt > $OUT/r2/variants-ssb20.txt.gz && rm -f $OUT/variants-*
X=/tmp/tessera-gpu/bin/tessera
f=/tmp/all20.sql; : > $f
for p in benchmarks/ssb/q*.sql; do echo "$(sed '/^--/d' $p | tr '\n' ' ' | sed 's/;\s*$//');" >> $f; done
rm -rf /tmp/tdv-ssb20/kernels
TESSERA_DUMP_KERNELS=$OUT/k20d $X --format csv --data-dir /tmp/tdv-ssb20 sql $f > /dev/null 2>&1
rm -rf /tmp/tdv-ssb20/kernels
( echo "SET tessera.gpu_compact_tables = 'always';"; cat $f ) > /tmp/all20c.sql
TESSERA_DUMP_KERNELS=$OUT/k20c $X --format csv --data-dir /tmp/tdv-ssb20 sql /tmp/all20c.sql > /dev/null 2>&1
tar -C $OUT -czf $OUT/kernels-sf20-run2.tgz k20d k20c && rm -rf $OUT/k20d $OUT/k20c
rm -rf /tmp/tdv-ssb20
VARIANTS="d dB1:$B1" SUITE=tpch SF=10 ROUNDS=2 RUNS=3 bash $S variants > $OUT/log2-tpch10.txt 2>&1
mv $OUT/medians-* $OUT/r2/ && gzip -c $OUT/variants-tpch10.txt > $OUT/r2/variants-tpch10.txt.gz && rm -f $OUT/variants-*
cat $OUT/log2-tests.txt | tail -30; grep -hE "gen --load" $OUT/log2-*.txt; cat $OUT/r2/medians-*
date -u
