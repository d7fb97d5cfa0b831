#!/usr/bin/env bash
# Run 2 of 2026-12-01b (pack B: pack A, where a warp vote skips most warps no queue, and
# byte-wide columns after the queued test loaded up front). GPU unit tests; SSB and
# TPC-H SF 1 answers: CPU backend, d, always; SSB SF 20, 5 EXPLAIN ANALYZE a query, 3 rounds in turns: d, dq0
# (TESSERA_EXP_SCALAR_QUEUE=0: as before), c, cq0 (the same, 'always'); SSB SF 100
# (gen --load), 3 a query, 2 rounds in turns, the same four; the 13 SF 100 answers of d
# and always against the CPU backend's.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
M=benchmarks/results/gpu-2026-11-30h/medians.py
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } > $OUT/log2-tests.txt
P=/tmp/td20/bench/ssb-sf20
( grep -q lineorder $P/manifest.json 2>/dev/null || { rm -rf /tmp/td20; $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1; } ) &
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^  left|^ right"; done >> $OUT/log2-tests.txt 2>&1
{ for s in ssb tpch; do
    [ -d /tmp/td${s}1/bench/$s-sf1 ] || $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera > /dev/null 2>&1
    D1=/tmp/td${s}1/bench/$s-sf1
    q=/tmp/$s-q.sql; : > $q
    for f in benchmarks/$s/q*.sql; do echo "$(sed '/^--/d' $f | tr '\n' ' ' | sed 's/;\s*$//');" >> $q; done
    $X --format csv --data-dir $D1 sql <(echo "SET tessera.device = 'cpu';"; cat $q) > /tmp/$s-cpu.out 2>&1
    $X --format csv --data-dir $D1 sql $q > /tmp/$s-d.out 2>&1
    $X --format csv --data-dir $D1 sql <(echo "SET tessera.gpu_compact_tables = 'always';"; cat $q) > /tmp/$s-c.out 2>&1
    for m in d c; do echo "== $s SF1 $m against the CPU backend: $(wc -l < /tmp/$s-cpu.out) lines, $(diff /tmp/$s-cpu.out /tmp/$s-$m.out | grep -c '^[<>]') differ"; done
  done; } >> $OUT/log2-tests.txt 2>&1
wait
an() { dir=$1; n=$2; set=$3; f=/tmp/an.sql; : > $f; [ -n "$set" ] && echo "SET tessera.gpu_compact_tables = '$set';" >> $f
  for p in benchmarks/ssb/q*.sql; do q=$(basename $p .sql); s=$(sed '/^--/d' $p | tr '\n' ' ' | sed 's/;\s*$//'); echo "SELECT 'MARK $q' AS m;" >> $f; echo "$s;" >> $f; for i in $(seq $n); do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
  $X --format csv --data-dir $dir sql $f 2>&1 | grep -oE "MARK q[0-9.]+|GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB|rror.*"; }
for round in 1 2 3; do
  echo "== d round $round"; an $P 5 ""
  echo "== dq0 round $round"; TESSERA_EXP_SCALAR_QUEUE=0 an $P 5 ""
  echo "== c round $round"; an $P 5 always
  echo "== cq0 round $round"; TESSERA_EXP_SCALAR_QUEUE=0 an $P 5 always
done > $OUT/log2-variants20.txt 2>&1
python3 $M $OUT/log2-variants20.txt > $OUT/log2-medians20.txt
D=/tmp/td100/bench/ssb-sf100
grep -q lineorder $D/manifest.json 2>/dev/null || { rm -rf /tmp/td100; /usr/bin/time -f "gen --load %e s" $X --data-dir $D gen ssb --sf 100 --load > /dev/null 2>> $OUT/log2-tests.txt; }
for round in 1 2; do
  echo "== d round $round"; an $D 3 ""
  echo "== dq0 round $round"; TESSERA_EXP_SCALAR_QUEUE=0 an $D 3 ""
  echo "== c round $round"; an $D 3 always
  echo "== cq0 round $round"; TESSERA_EXP_SCALAR_QUEUE=0 an $D 3 always
done > $OUT/log2-variants100.txt 2>&1
python3 $M $OUT/log2-variants100.txt > $OUT/log2-medians100.txt
q=/tmp/ssb100.sql; : > $q
for f in benchmarks/ssb/q*.sql; do echo "$(sed '/^--/d' $f | tr '\n' ' ' | sed 's/;\s*$//');" >> $q; done
$X --format csv --data-dir $D sql <(echo "SET tessera.device = 'cpu';"; cat $q) > /tmp/100-cpu.out 2>&1
for m in auto always; do
  $X --format csv --data-dir $D sql <(echo "SET tessera.gpu_compact_tables = '$m';"; cat $q) > /tmp/100-$m.out 2>&1
  echo "== SSB SF 100 $m against the CPU backend: $(wc -l < /tmp/100-$m.out) / $(wc -l < /tmp/100-cpu.out) lines, $(diff /tmp/100-cpu.out /tmp/100-$m.out | grep -c '^[<>]') differ" >> $OUT/log2-tests.txt
done
cat $OUT/log2-tests.txt; cat $OUT/log2-medians20.txt $OUT/log2-medians100.txt | tr '|' '\n'
date -u
