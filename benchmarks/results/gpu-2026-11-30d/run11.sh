#!/usr/bin/env bash
# Run 11 of 2026-11-30d (the last commit: a probed table too large to keep still has an
# identity, so builds probing it are kept). GPU unit tests; TPC-H SF 1 q08 after each of
# q01-q07; every TPC-H and SSB SF 1 query on the GPU against the CPU backend, one process
# each; gpu-suite's `answers`; TPC-H SF 10, 5 warm runs x 2.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log11-tests.txt
( [ -d /tmp/tdh10/bench/tpch-sf10 ] || $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1 ) &
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^  left|^ right"; done >> $OUT/log11-tests.txt 2>&1
cat $OUT/log11-tests.txt
for s in tpch ssb; do [ -d /tmp/td${s}1/bench/$s-sf1 ] || $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera > /dev/null 2>&1; done
D=/tmp/tdtpch1/bench/tpch-sf1
one() { sed '/^--/d' benchmarks/tpch/$1.sql | tr '\n' ' ' | sed 's/;\s*$//'; echo ";"; }
ans() { grep -E "^199[56]," | paste -sd' '; }
{
for p in q01 q02 q03 q04 q05 q06 q07; do
  echo "== $p then q08: $( { one $p; one q08; } | $X --format csv --data-dir $D sql /dev/stdin 2>&1 | ans)"
done
for s in tpch ssb; do
  q=/tmp/$s-all.sql; : > $q
  for f in benchmarks/$s/q*.sql; do echo "$(sed '/^--/d' $f | tr '\n' ' ' | sed 's/;\s*$//');" >> $q; done
  $X --format csv --data-dir /tmp/td${s}1/bench/$s-sf1 sql <(cat $q; cat $q) > /tmp/$s-g.out 2>&1
  $X --format csv --data-dir /tmp/td${s}1/bench/$s-sf1 sql <(echo "SET tessera.device = 'cpu';"; cat $q; cat $q) > /tmp/$s-c.out 2>&1
  echo "== $s SF1, every query twice in one process, GPU against the CPU backend: $(wc -l < /tmp/$s-g.out) lines, $(diff /tmp/$s-c.out /tmp/$s-g.out | grep -c '^[<>]') differ"
  diff /tmp/$s-c.out /tmp/$s-g.out | head -6
done
} > $OUT/log11-q08.txt 2>&1
cat $OUT/log11-q08.txt
bash $S answers > $OUT/log11-answers.txt 2>&1
grep -vE "^(WARNING|ERROR)" $OUT/log11-answers.txt | tail -6
wait
for r in 1 2; do
  $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 5 --engine tessera 2>&1 | grep -E "^│ (q[0-9]+|total)" > /tmp/tp.txt
  echo "== TPC-H SF10 round $r"; cat /tmp/tp.txt
done > $OUT/log11-tpch.txt 2>&1
grep -E "==|total" $OUT/log11-tpch.txt
date -u
