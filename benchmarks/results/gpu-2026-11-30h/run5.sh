#!/usr/bin/env bash
# Run 5 of 2026-11-30h (pack B: pack A without TESSERA_EXP_COMPACT_ITEMS, and a stage ends
# before a row-at-a-time load of a compact column that the probes before it make likely
# to find a warp's rows all dropped, so the warp votes and skips it; off with
# TESSERA_EXP_COMPACT_CUTS=0). GPU unit tests; SSB and TPC-H SF 1 answers: CPU backend, d,
# always; SSB SF 20, every query's kernels, 5 EXPLAIN ANALYZE each, in turns over 3
# rounds: d, c ('always'), c0 (c with TESSERA_EXP_COMPACT_CUTS=0).
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
R=benchmarks/results/gpu-2026-11-30h
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } > $OUT/log5-tests.txt
P=/tmp/td20/bench/ssb-sf20
( grep -q lineorder $P/manifest.json 2>/dev/null || { rm -rf /tmp/td20; $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1; } ) &
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^  left|^ right"; done >> $OUT/log5-tests.txt 2>&1
{ for s in ssb tpch; do
    [ -d /tmp/td${s}1/bench/$s-sf1 ] || $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera > /dev/null 2>&1
    D=/tmp/td${s}1/bench/$s-sf1
    q=/tmp/$s-q.sql; : > $q
    for f in benchmarks/$s/q*.sql; do echo "$(sed '/^--/d' $f | tr '\n' ' ' | sed 's/;\s*$//');" >> $q; done
    $X --format csv --data-dir $D sql <(echo "SET tessera.device = 'cpu';"; cat $q) > /tmp/$s-cpu.out 2>&1
    $X --format csv --data-dir $D sql $q > /tmp/$s-d.out 2>&1
    $X --format csv --data-dir $D sql <(echo "SET tessera.gpu_compact_tables = 'always';"; cat $q) > /tmp/$s-c.out 2>&1
    for m in d c; do echo "== $s SF1 $m against the CPU backend: $(wc -l < /tmp/$s-cpu.out) lines, $(diff /tmp/$s-cpu.out /tmp/$s-$m.out | grep -c '^[<>]') differ"; done
  done; } >> $OUT/log5-tests.txt 2>&1
cat $OUT/log5-tests.txt
wait
an() { set=$1; shift; f=/tmp/an.sql; : > $f; [ -n "$set" ] && echo "SET tessera.gpu_compact_tables = '$set';" >> $f
  for q in "$@"; do s=$(sed '/^--/d' benchmarks/ssb/$q.sql | tr '\n' ' ' | sed 's/;\s*$//'); echo "SELECT 'MARK $q' AS m;" >> $f; echo "$s;" >> $f; for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
  $X --format csv --data-dir $P sql $f 2>&1 | grep -oE "MARK q[0-9.]+|GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB|rror.*"; }
ALL=$(ls benchmarks/ssb/q*.sql | xargs -n1 basename | sed 's/\.sql$//' | tr '\n' ' ')
for round in 1 2 3; do
  echo "== d round $round"; an "" $ALL
  echo "== c round $round"; an always $ALL
  echo "== c0 round $round"; TESSERA_EXP_COMPACT_CUTS=0 an always $ALL
done > $OUT/log5-variants.txt 2>&1
python3 $R/medians.py $OUT/log5-variants.txt > $OUT/log5-medians.txt
cat $OUT/log5-medians.txt | tr '|' '\n'
date -u
