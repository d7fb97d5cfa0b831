#!/usr/bin/env bash
# Run 2 of 2026-11-30f (pack B: pack A with forms of a bit-packed column's row read by
# tile and item selected by TESSERA_EXP_ITEM_ROWS: 1 every item by its tile's first word;
# 3 so only where a tile's values start on a word, else the row's own 64-bit address; 4
# as 1 but a value that may cross words always loads both; 5 the row's own address in
# 32 bits (kernels counting rows in `int`s); 6 as 3 with 5's 32-bit address). SSB and
# TPC-H SF 1 answers under the memory limit (compact) with each form against the CPU
# backend's; SSB SF 20, every query's kernels, 5 EXPLAIN ANALYZE each, in turns over 3
# rounds: d (defaults), ir0 (compact, rows by number: as before this session), ir1, ir3,
# ir4, ir5, ir6 (compact, under '12GB').
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log2-answers.txt
( grep -q lineorder /tmp/tdturns20/bench/ssb-sf20/manifest.json 2>/dev/null || { rm -rf /tmp/tdturns20; $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1; } ) &
{ for s in ssb tpch; do
    [ -d /tmp/td${s}1/bench/$s-sf1 ] || $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera > /dev/null 2>&1
    D=/tmp/td${s}1/bench/$s-sf1; lim=600MB; [ $s = tpch ] && lim=1GB
    q=/tmp/$s-q.sql; : > $q
    for f in benchmarks/$s/q*.sql; do echo "$(sed '/^--/d' $f | tr '\n' ' ' | sed 's/;\s*$//');" >> $q; done
    [ -f /tmp/$s-cpu.out ] || $X --format csv --data-dir $D sql <(echo "SET tessera.device = 'cpu';"; cat $q) > /tmp/$s-cpu.out 2>&1
    for form in 1 3 4 5 6; do
      TESSERA_EXP_ITEM_ROWS=$form $X --format csv --data-dir $D sql <(echo "SET tessera.gpu_memory_limit = '$lim';"; cat $q) > /tmp/$s-ir$form.out 2>&1
      echo "== $s SF1 compact, form $form, against the CPU backend: $(wc -l < /tmp/$s-cpu.out) lines, $(diff /tmp/$s-cpu.out /tmp/$s-ir$form.out | grep -c '^[<>]') differ"
    done
  done; } >> $OUT/log2-answers.txt 2>&1
cat $OUT/log2-answers.txt
wait
P=/tmp/tdturns20/bench/ssb-sf20
an() { f=/tmp/an.sql; : > $f; [ -n "$1" ] && echo "SET tessera.gpu_memory_limit = '$1';" >> $f
  for q in benchmarks/ssb/q*.sql; do s=$(sed '/^--/d' $q | tr '\n' ' ' | sed 's/;\s*$//'); echo "$s;" >> $f; for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
  $X --format csv --data-dir $P sql $f 2>&1 | grep -oE "GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB|rror.*"; }
for round in 1 2 3; do
  echo "== d round $round"; an ""
  for form in 0 1 3 4 5 6; do echo "== ir$form round $round"; TESSERA_EXP_ITEM_ROWS=$form an 12GB; done
done > $OUT/log2-variants.txt 2>&1
python3 benchmarks/results/gpu-2026-11-30f/medians.py $OUT/log2-variants.txt d ir0 ir1 ir3 ir4 ir5 ir6 > $OUT/log2-medians.txt
cat $OUT/log2-medians.txt
date -u
