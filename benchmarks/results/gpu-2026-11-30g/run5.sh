#!/usr/bin/env bash
# Run 5 of 2026-11-30g (pack C: SET tessera.gpu_compact_tables). GPU unit tests; SSB and
# TPC-H SF 1 answers under 'always' against the CPU backend's; SSB SF 100, every query's
# kernels, 3 EXPLAIN ANALYZE each after one plain run, one process each, in turns over 2
# rounds: d (the defaults: auto under the default limit), always, never ('never' under
# a '64GB' limit, which 'auto' puts up compact); the 13 answers under 'always' against
# the CPU backend's.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
R=benchmarks/results/gpu-2026-11-30g
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } > $OUT/log5-tests.txt
D=/tmp/td100/bench/ssb-sf100
( grep -q lineorder $D/manifest.json 2>/dev/null || { rm -rf /tmp/td100; $X --data-dir $D gen ssb --sf 100 --load > /dev/null 2>&1; } ) &
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^  left|^ right"; done >> $OUT/log5-tests.txt 2>&1
{ for s in ssb tpch; do
    [ -d /tmp/td${s}1/bench/$s-sf1 ] || $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera > /dev/null 2>&1
    P1=/tmp/td${s}1/bench/$s-sf1; q=/tmp/$s-q.sql; : > $q
    for f in benchmarks/$s/q*.sql; do echo "$(sed '/^--/d' $f | tr '\n' ' ' | sed 's/;\s*$//');" >> $q; done
    $X --format csv --data-dir $P1 sql <(echo "SET tessera.device = 'cpu';"; cat $q) > /tmp/$s-cpu.out 2>&1
    $X --format csv --data-dir $P1 sql <(echo "SET tessera.gpu_compact_tables = 'always';"; cat $q) > /tmp/$s-always.out 2>&1
    echo "== $s SF1 always against the CPU backend: $(wc -l < /tmp/$s-cpu.out) lines, $(diff /tmp/$s-cpu.out /tmp/$s-always.out | grep -c '^[<>]') differ"
  done; } >> $OUT/log5-tests.txt 2>&1
wait
an() { f=/tmp/an100.sql; : > $f; for x in "$@"; do echo "$x;" >> $f; done
  for p in benchmarks/ssb/q*.sql; do q=$(basename $p .sql); s=$(sed '/^--/d' $p | tr '\n' ' ' | sed 's/;\s*$//'); echo "SELECT 'MARK $q' AS m;" >> $f; echo "$s;" >> $f; for i in 1 2 3; do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
  $X --format csv --data-dir $D sql $f 2>&1 | grep -oE "MARK q[0-9.]+|GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB|rror.*"; }
for round in 1 2; do
  echo "== d round $round"; an "SET tessera.gpu_compact_tables = 'auto'"
  echo "== always round $round"; an "SET tessera.gpu_compact_tables = 'always'"
  echo "== never round $round"; an "SET tessera.gpu_memory_limit = '64GB'" "SET tessera.gpu_compact_tables = 'never'"
done > $OUT/log5-variants.txt 2>&1
python3 $R/medians.py $OUT/log5-variants.txt > $OUT/log5-medians.txt
q=/tmp/ssb100.sql; : > $q
for f in benchmarks/ssb/q*.sql; do echo "$(sed '/^--/d' $f | tr '\n' ' ' | sed 's/;\s*$//');" >> $q; done
$X --format csv --data-dir $D sql <(echo "SET tessera.device = 'cpu';"; cat $q) > /tmp/100-cpu.out 2>&1
$X --format csv --data-dir $D sql <(echo "SET tessera.gpu_compact_tables = 'always';"; cat $q) > /tmp/100-always.out 2>&1
echo "== SSB SF 100 always against the CPU backend: $(wc -l < /tmp/100-always.out) / $(wc -l < /tmp/100-cpu.out) lines, $(diff /tmp/100-cpu.out /tmp/100-always.out | grep -c '^[<>]') differ" >> $OUT/log5-tests.txt
cat $OUT/log5-tests.txt; cat $OUT/log5-medians.txt | tr '|' '\n'
date -u
