#!/usr/bin/env bash
# Run 5 of 2026-11-30d: TPC-H SF 1 q08 on the GPU answered 0.03476320 / 0.03831572 for
# 1995 / 1996 (the CPU backend 0.03443589 / 0.04148552) when run after q01-q07 in one
# process (run 2). Which run order and which switch brings it on.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
[ -d /tmp/tdtpch1/bench/tpch-sf1 ] || $X --data-dir /tmp/tdtpch1 bench tpch --sf 1 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1
D=/tmp/tdtpch1/bench/tpch-sf1
one() { sed '/^--/d' benchmarks/tpch/$1.sql | tr '\n' ' ' | sed 's/;\s*$//'; echo ";"; }
ans() { grep -E "^199[56]," | paste -sd' '; }
{
echo "== q08 alone: $(one q08 | $X --format csv --data-dir $D sql /dev/stdin 2>&1 | ans)"
echo "== q08 twice: $( { one q08; one q08; } | $X --format csv --data-dir $D sql /dev/stdin 2>&1 | ans)"
for p in q01 q02 q03 q04 q05 q06 q07; do
  echo "== $p then q08: $( { one $p; one q08; } | $X --format csv --data-dir $D sql /dev/stdin 2>&1 | ans)"
done
all() { for k in 01 02 03 04 05 06 07; do one q$k; done; one q08; }
echo "== q01-q08: $(all | $X --format csv --data-dir $D sql /dev/stdin 2>&1 | ans)"
for v in TESSERA_EXP_BUILD_CACHE=0 TESSERA_EXP_KEEP_RESULTS=0 TESSERA_EXP_NARROW=0 TESSERA_EXP_EARLY_LAUNCH=0 TESSERA_EXP_SPARE_SINKS=0 TESSERA_EXP_ADMISSION_BUILDS=0 TESSERA_EXP_QUERY_FILL=0 TESSERA_EXP_MERGE_SINK=0; do
  echo "== q01-q08 $v: $(all | env $v $X --format csv --data-dir $D sql /dev/stdin 2>&1 | ans)"
done
echo "== q01-q08 device cpu: $( { echo "SET tessera.device = 'cpu';"; all; } | $X --format csv --data-dir $D sql /dev/stdin 2>&1 | ans)"
echo "== EXPLAIN ANALYZE q08 after q07"
{ one q07; echo "EXPLAIN ANALYZE $(one q08)"; } | $X --data-dir $D sql /dev/stdin 2>&1 | tail -60
} > $OUT/log5-q08.txt 2>&1
cat $OUT/log5-q08.txt
