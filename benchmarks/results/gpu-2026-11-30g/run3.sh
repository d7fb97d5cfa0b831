#!/usr/bin/env bash
# Run 3 of 2026-11-30g (pack B: a column of runs keeps the next tile's distances in its
# registers, the reference added where the tile takes them; TESSERA_EXP_RUNS_DISTANCES=0
# adds it as they are read, as before). GPU unit tests; SSB and TPC-H SF 1 answers on the
# CPU backend, the GPU (d) and the GPU under a memory limit (lim: compact), compared; SSB
# SF 20, every query's kernels, 5 EXPLAIN ANALYZE each, in turns over 3 rounds: d, c
# ('12GB': lineorder compact), c0 (c with TESSERA_EXP_RUNS_DISTANCES=0); random queries
# with compact forms forced (TESSERA_EXP_NARROW_BITS=8, TESSERA_EXP_NARROW_RUNS=2).
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
R=benchmarks/results/gpu-2026-11-30g
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log3-tests.txt
P=/tmp/td20/bench/ssb-sf20
( grep -q lineorder $P/manifest.json 2>/dev/null || { rm -rf /tmp/td20; $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1; } ) &
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^  left|^ right"; done >> $OUT/log3-tests.txt 2>&1
cat $OUT/log3-tests.txt
{ for s in ssb tpch; do
    [ -d /tmp/td${s}1/bench/$s-sf1 ] || $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera > /dev/null 2>&1
    D=/tmp/td${s}1/bench/$s-sf1; lim=600MB; [ $s = tpch ] && lim=1GB
    q=/tmp/$s-q.sql; : > $q
    for f in benchmarks/$s/q*.sql; do echo "$(sed '/^--/d' $f | tr '\n' ' ' | sed 's/;\s*$//');" >> $q; done
    $X --format csv --data-dir $D sql <(echo "SET tessera.device = 'cpu';"; cat $q) > /tmp/$s-cpu.out 2>&1
    $X --format csv --data-dir $D sql $q > /tmp/$s-d.out 2>&1
    $X --format csv --data-dir $D sql <(echo "SET tessera.gpu_memory_limit = '$lim';"; cat $q) > /tmp/$s-lim.out 2>&1
    for m in d lim; do echo "== $s SF1 $m against the CPU backend: $(wc -l < /tmp/$s-cpu.out) lines, $(diff /tmp/$s-cpu.out /tmp/$s-$m.out | grep -c '^[<>]') differ"; done
  done; } > $OUT/log3-answers.txt 2>&1
cat $OUT/log3-answers.txt
wait
an() { lim=$1; shift; f=/tmp/an.sql; : > $f; [ -n "$lim" ] && echo "SET tessera.gpu_memory_limit = '$lim';" >> $f
  for q in "$@"; do s=$(sed '/^--/d' benchmarks/ssb/$q.sql | tr '\n' ' ' | sed 's/;\s*$//'); echo "SELECT 'MARK $q' AS m;" >> $f; echo "$s;" >> $f; for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
  $X --format csv --data-dir $P sql $f 2>&1 | grep -oE "MARK q[0-9.]+|GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB|rror.*"; }
ALL=$(ls benchmarks/ssb/q*.sql | xargs -n1 basename | sed 's/\.sql$//' | tr '\n' ' ')
for round in 1 2 3; do
  echo "== d round $round"; an "" $ALL
  echo "== c round $round"; an 12GB $ALL
  echo "== c0 round $round"; TESSERA_EXP_RUNS_DISTANCES=0 an 12GB $ALL
done > $OUT/log3-variants.txt 2>&1
python3 $R/medians.py $OUT/log3-variants.txt > $OUT/log3-medians.txt
cat $OUT/log3-medians.txt | tr '|' '\n'
TESSERA_EXP_NARROW_BITS=8 TESSERA_EXP_NARROW_RUNS=2 SEEDS=8 SEED0=9400 DIFFTEST_SECONDS=90 bash benchmarks/device/gpu-suite.sh difftests > $OUT/log3-difftests.txt 2>&1
grep -vE "^(WARNING|ERROR)" $OUT/log3-difftests.txt | tail -4
mv $OUT/difftests.tgz $OUT/difftests-run3.tgz 2>/dev/null
date -u
