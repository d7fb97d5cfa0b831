#!/usr/bin/env bash
# Run 4 of 2026-12-01b (pack D: pack C, one entry a lane where a drain reads compact
# columns: the defaults as kept). GPU unit tests; SSB and TPC-H SF 1 answers: CPU
# backend, d, always; TPC-H SF 10 (gen --load), 3 EXPLAIN ANALYZE a query, 2 rounds in
# turns: d (defaults) and dq0 (TESSERA_EXP_SCALAR_QUEUE=0); random queries (`tessera
# difftest`, GPU against the CPU backend): 8 seeds at their defaults (4 narrowed to byte
# widths), then 8 with compact forms forced, each stopped after 60 s.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
M=benchmarks/results/gpu-2026-11-30h/medians.py
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } > $OUT/log4-tests.txt
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^  left|^ right"; done >> $OUT/log4-tests.txt 2>&1
{ for s in ssb tpch; do
    [ -d /tmp/td${s}1/bench/$s-sf1 ] || $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera > /dev/null 2>&1
    D1=/tmp/td${s}1/bench/$s-sf1
    q=/tmp/$s-q.sql; : > $q
    for f in benchmarks/$s/q*.sql; do echo "$(sed '/^--/d' $f | tr '\n' ' ' | sed 's/;\s*$//');" >> $q; done
    $X --format csv --data-dir $D1 sql <(echo "SET tessera.device = 'cpu';"; cat $q) > /tmp/$s-cpu.out 2>&1
    $X --format csv --data-dir $D1 sql $q > /tmp/$s-d.out 2>&1
    $X --format csv --data-dir $D1 sql <(echo "SET tessera.gpu_compact_tables = 'always';"; cat $q) > /tmp/$s-c.out 2>&1
    for m in d c; do echo "== $s SF1 $m against the CPU backend: $(wc -l < /tmp/$s-cpu.out) lines, $(diff /tmp/$s-cpu.out /tmp/$s-$m.out | grep -c '^[<>]') differ"; done
  done; } >> $OUT/log4-tests.txt 2>&1
D=/tmp/tdh10/bench/tpch-sf10
grep -q lineitem $D/manifest.json 2>/dev/null || { rm -rf /tmp/tdh10; /usr/bin/time -f "gen --load %e s" $X --data-dir $D gen tpch --sf 10 --load > /dev/null 2> $OUT/log4-gen.txt; }
an() { dir=$1; n=$2; f=/tmp/an.sql; : > $f
  for p in benchmarks/tpch/q*.sql; do q=$(basename $p .sql | sed 's/^q0*/q/'); s=$(sed '/^--/d' $p | tr '\n' ' ' | sed 's/;\s*$//'); echo "SELECT 'MARK $q.0' AS m;" >> $f; echo "$s;" >> $f; for i in $(seq $n); do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
  $X --format csv --data-dir $dir sql $f 2>&1 | grep -oE "MARK q[0-9.]+|GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB|rror.*"; }
for round in 1 2; do
  echo "== d round $round"; an $D 3
  echo "== dq0 round $round"; TESSERA_EXP_SCALAR_QUEUE=0 an $D 3
done > $OUT/log4-variants-tpch10.txt 2>&1
python3 $M $OUT/log4-variants-tpch10.txt > $OUT/log4-medians-tpch10.txt
cat $OUT/log4-tests.txt $OUT/log4-gen.txt; cat $OUT/log4-medians-tpch10.txt | tr '|' '\n'
SEEDS=8 SEED0=10100 NARROW_SEEDS=4 DIFFTEST_SECONDS=60 bash benchmarks/device/gpu-suite.sh difftests > $OUT/log4-difftests-default.txt 2>&1
mv $OUT/difftests.tgz $OUT/difftests-run4-default.tgz 2>/dev/null
TESSERA_EXP_NARROW_BITS=8 TESSERA_EXP_NARROW_RUNS=2 SEEDS=8 SEED0=10200 DIFFTEST_SECONDS=60 bash benchmarks/device/gpu-suite.sh difftests > $OUT/log4-difftests-compact.txt 2>&1
mv $OUT/difftests.tgz $OUT/difftests-run4-compact.tgz 2>/dev/null
for f in $OUT/log4-difftests-*.txt; do echo "== $f"; grep -vE "^(WARNING|ERROR)" $f | tail -4; done
date -u
