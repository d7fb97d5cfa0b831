#!/usr/bin/env bash
# Run 1 of 2026-11-30h (pack A: scalar sums of values whose total fits 64 bits add in a
# 64-bit register, a sum without a count keeps none; an overflowing checked result sets a
# per-thread flag written once after the last tile; TESSERA_EXP_COMPACT_ITEMS, items a
# thread of many-probe pipelines over compact columns). GPU unit tests; SSB and TPC-H SF 1
# answers on the CPU backend, the GPU (d) and the GPU with every table compact
# (SET tessera.gpu_compact_tables = 'always'), compared; SSB SF 20, every query's kernels,
# 5 EXPLAIN ANALYZE each, in turns over 3 rounds: d, c ('always'), c4 and c8 (c with
# TESSERA_EXP_COMPACT_ITEMS=4 and 8).
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
R=benchmarks/results/gpu-2026-11-30h
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log1-tests.txt
P=/tmp/td20/bench/ssb-sf20
( grep -q lineorder $P/manifest.json 2>/dev/null || { rm -rf /tmp/td20; $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1; } ) &
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^  left|^ right"; done >> $OUT/log1-tests.txt 2>&1
cat $OUT/log1-tests.txt
{ for s in ssb tpch; do
    [ -d /tmp/td${s}1/bench/$s-sf1 ] || $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera > /dev/null 2>&1
    D=/tmp/td${s}1/bench/$s-sf1
    q=/tmp/$s-q.sql; : > $q
    for f in benchmarks/$s/q*.sql; do echo "$(sed '/^--/d' $f | tr '\n' ' ' | sed 's/;\s*$//');" >> $q; done
    $X --format csv --data-dir $D sql <(echo "SET tessera.device = 'cpu';"; cat $q) > /tmp/$s-cpu.out 2>&1
    $X --format csv --data-dir $D sql $q > /tmp/$s-d.out 2>&1
    $X --format csv --data-dir $D sql <(echo "SET tessera.gpu_compact_tables = 'always';"; cat $q) > /tmp/$s-c.out 2>&1
    for m in d c; do echo "== $s SF1 $m against the CPU backend: $(wc -l < /tmp/$s-cpu.out) lines, $(diff /tmp/$s-cpu.out /tmp/$s-$m.out | grep -c '^[<>]') differ"; done
  done; } > $OUT/log1-answers.txt 2>&1
cat $OUT/log1-answers.txt
wait
an() { set=$1; shift; f=/tmp/an.sql; : > $f; [ -n "$set" ] && echo "SET tessera.gpu_compact_tables = '$set';" >> $f
  for q in "$@"; do s=$(sed '/^--/d' benchmarks/ssb/$q.sql | tr '\n' ' ' | sed 's/;\s*$//'); echo "SELECT 'MARK $q' AS m;" >> $f; echo "$s;" >> $f; for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
  $X --format csv --data-dir $P sql $f 2>&1 | grep -oE "MARK q[0-9.]+|GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB|rror.*"; }
ALL=$(ls benchmarks/ssb/q*.sql | xargs -n1 basename | sed 's/\.sql$//' | tr '\n' ' ')
for round in 1 2 3; do
  echo "== d round $round"; an "" $ALL
  echo "== c round $round"; an always $ALL
  echo "== c4 round $round"; TESSERA_EXP_COMPACT_ITEMS=4 an always $ALL
  echo "== c8 round $round"; TESSERA_EXP_COMPACT_ITEMS=8 an always $ALL
done > $OUT/log1-variants.txt 2>&1
python3 $R/medians.py $OUT/log1-variants.txt > $OUT/log1-medians.txt
cat $OUT/log1-medians.txt | tr '|' '\n'
date -u
