#!/usr/bin/env bash
# Run 1 of 2026-11-30i (pack A: int rows and stream steps, 897aa2d). GPU unit tests; SSB
# and TPC-H SF 1 answers: CPU backend, d, always; the SSB SF 20 compact kernels as
# generated (TESSERA_DUMP_KERNELS) in three forms, to count their registers here; SSB
# SF 20, 5 EXPLAIN ANALYZE a query, 3 rounds in turns: d, d0 (TESSERA_EXP_INT_ROWS=0),
# c ('always'), cs0 (c with TESSERA_EXP_STREAM_STEPS=0: int rows only), c0 (c with
# TESSERA_EXP_INT_ROWS=0: as before this pack).
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
M=benchmarks/results/gpu-2026-11-30h/medians.py
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } > $OUT/log1-tests.txt
P=/tmp/td20/bench/ssb-sf20
( grep -q lineorder $P/manifest.json 2>/dev/null || { rm -rf /tmp/td20; $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1; } ) &
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^  left|^ right"; done >> $OUT/log1-tests.txt 2>&1
{ for s in ssb tpch; do
    [ -d /tmp/td${s}1/bench/$s-sf1 ] || $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera > /dev/null 2>&1
    D1=/tmp/td${s}1/bench/$s-sf1
    q=/tmp/$s-q.sql; : > $q
    for f in benchmarks/$s/q*.sql; do echo "$(sed '/^--/d' $f | tr '\n' ' ' | sed 's/;\s*$//');" >> $q; done
    $X --format csv --data-dir $D1 sql <(echo "SET tessera.device = 'cpu';"; cat $q) > /tmp/$s-cpu.out 2>&1
    $X --format csv --data-dir $D1 sql $q > /tmp/$s-d.out 2>&1
    $X --format csv --data-dir $D1 sql <(echo "SET tessera.gpu_compact_tables = 'always';"; cat $q) > /tmp/$s-c.out 2>&1
    for m in d c; do echo "== $s SF1 $m against the CPU backend: $(wc -l < /tmp/$s-cpu.out) lines, $(diff /tmp/$s-cpu.out /tmp/$s-$m.out | grep -c '^[<>]') differ"; done
  done; } >> $OUT/log1-tests.txt 2>&1
wait
for v in c cs0 c0; do
  e="TESSERA_EXP_INT_ROWS=1 TESSERA_EXP_STREAM_STEPS=1"; [ $v = cs0 ] && e="TESSERA_EXP_STREAM_STEPS=0"; [ $v = c0 ] && e="TESSERA_EXP_INT_ROWS=0"
  for q in q1.1 q1.3 q2.1 q2.2 q3.1 q3.2 q3.4 q4.1 q4.2 q4.3; do
    rm -rf $P/kernels; mkdir -p $OUT/kernels-$v/$q
    echo "SET tessera.gpu_compact_tables = 'always'; $(sed '/^--/d' benchmarks/ssb/$q.sql | tr '\n' ' ')" > /tmp/k.sql
    env $e TESSERA_DUMP_KERNELS=$OUT/kernels-$v/$q $X --format csv --data-dir $P sql /tmp/k.sql > /dev/null 2>&1
  done
done
rm -rf $P/kernels
( cd $OUT && tar -czf kernels-run1.tgz kernels-c kernels-cs0 kernels-c0 && rm -rf kernels-c kernels-cs0 kernels-c0 )
an() { dir=$1; n=$2; set=$3; f=/tmp/an.sql; : > $f; [ -n "$set" ] && echo "SET tessera.gpu_compact_tables = '$set';" >> $f
  for p in benchmarks/ssb/q*.sql; do q=$(basename $p .sql); s=$(sed '/^--/d' $p | tr '\n' ' ' | sed 's/;\s*$//'); echo "SELECT 'MARK $q' AS m;" >> $f; echo "$s;" >> $f; for i in $(seq $n); do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
  $X --format csv --data-dir $dir sql $f 2>&1 | grep -oE "MARK q[0-9.]+|GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB|rror.*"; }
for round in 1 2 3; do
  echo "== d round $round"; an $P 5 ""
  echo "== d0 round $round"; TESSERA_EXP_INT_ROWS=0 an $P 5 ""
  echo "== c round $round"; an $P 5 always
  echo "== cs0 round $round"; TESSERA_EXP_STREAM_STEPS=0 an $P 5 always
  echo "== c0 round $round"; TESSERA_EXP_INT_ROWS=0 an $P 5 always
done > $OUT/log1-variants20.txt 2>&1
python3 $M $OUT/log1-variants20.txt > $OUT/log1-medians20.txt
cat $OUT/log1-tests.txt; cat $OUT/log1-medians20.txt | tr '|' '\n'
date -u
