#!/usr/bin/env bash
# Run 2 of 2026-11-30i (pack A, as run 1). SSB SF 100 (gen --load), 3 EXPLAIN ANALYZE a
# query, 2 rounds in turns: d, c ('always'), cs0 (c with TESSERA_EXP_STREAM_STEPS=0),
# c0 (c with TESSERA_EXP_INT_ROWS=0: as before this pack); the 13 answers of d and
# always against the CPU backend's.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
M=benchmarks/results/gpu-2026-11-30h/medians.py
D=/tmp/td100/bench/ssb-sf100
date -u > $OUT/log2-ssb100.txt
grep -q lineorder $D/manifest.json 2>/dev/null || { rm -rf /tmp/td100; /usr/bin/time -f "gen --load %e s" $X --data-dir $D gen ssb --sf 100 --load > /dev/null 2>> $OUT/log2-ssb100.txt; }
an() { dir=$1; n=$2; set=$3; f=/tmp/an.sql; : > $f; [ -n "$set" ] && echo "SET tessera.gpu_compact_tables = '$set';" >> $f
  for p in benchmarks/ssb/q*.sql; do q=$(basename $p .sql); s=$(sed '/^--/d' $p | tr '\n' ' ' | sed 's/;\s*$//'); echo "SELECT 'MARK $q' AS m;" >> $f; echo "$s;" >> $f; for i in $(seq $n); do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
  $X --format csv --data-dir $dir sql $f 2>&1 | grep -oE "MARK q[0-9.]+|GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB|rror.*"; }
for round in 1 2; do
  echo "== d round $round"; an $D 3 ""
  echo "== c round $round"; an $D 3 always
  echo "== cs0 round $round"; TESSERA_EXP_STREAM_STEPS=0 an $D 3 always
  echo "== c0 round $round"; TESSERA_EXP_INT_ROWS=0 an $D 3 always
done > $OUT/log2-variants100.txt 2>&1
python3 $M $OUT/log2-variants100.txt > $OUT/log2-medians100.txt
q=/tmp/ssb100.sql; : > $q
for f in benchmarks/ssb/q*.sql; do echo "$(sed '/^--/d' $f | tr '\n' ' ' | sed 's/;\s*$//');" >> $q; done
$X --format csv --data-dir $D sql <(echo "SET tessera.device = 'cpu';"; cat $q) > /tmp/100-cpu.out 2>&1
for m in auto always; do
  $X --format csv --data-dir $D sql <(echo "SET tessera.gpu_compact_tables = '$m';"; cat $q) > /tmp/100-$m.out 2>&1
  echo "== SSB SF 100 $m against the CPU backend: $(wc -l < /tmp/100-$m.out) / $(wc -l < /tmp/100-cpu.out) lines, $(diff /tmp/100-cpu.out /tmp/100-$m.out | grep -c '^[<>]') differ" >> $OUT/log2-ssb100.txt
done
cat $OUT/log2-ssb100.txt; cat $OUT/log2-medians100.txt | tr '|' '\n'
date -u
