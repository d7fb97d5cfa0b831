#!/usr/bin/env bash
# Run 6 of 2026-11-30d: the build cache keyed with the probed tables' keys. GPU unit
# tests; TPC-H SF 1 q08 after each of q01-q07 and after all of them (run 5's checks);
# every TPC-H and SSB SF 1 query on the GPU against the CPU backend in one process each;
# gpu-suite's `answers` (bench answers, gpu_repeats and gpu_build_cache on the GPU and the
# CPU backend compared).
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log6-tests.txt
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^  left|^ right"; done >> $OUT/log6-tests.txt 2>&1
cat $OUT/log6-tests.txt
for s in tpch ssb; do [ -d /tmp/td${s}1/bench/$s-sf1 ] || $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera > /dev/null 2>&1; done
D=/tmp/tdtpch1/bench/tpch-sf1
one() { sed '/^--/d' benchmarks/tpch/$1.sql | tr '\n' ' ' | sed 's/;\s*$//'; echo ";"; }
ans() { grep -E "^199[56]," | paste -sd' '; }
{
echo "== q08 alone: $(one q08 | $X --format csv --data-dir $D sql /dev/stdin 2>&1 | ans)"
for p in q01 q02 q03 q04 q05 q06 q07; do
  echo "== $p then q08: $( { one $p; one q08; } | $X --format csv --data-dir $D sql /dev/stdin 2>&1 | ans)"
done
for s in tpch ssb; do
  q=/tmp/$s-all.sql; : > $q
  for f in benchmarks/$s/q*.sql; do echo "$(sed '/^--/d' $f | tr '\n' ' ' | sed 's/;\s*$//');" >> $q; done
  $X --format csv --data-dir /tmp/td${s}1/bench/$s-sf1 sql $q > /tmp/$s-g.out 2>&1
  $X --format csv --data-dir /tmp/td${s}1/bench/$s-sf1 sql <(echo "SET tessera.device = 'cpu';"; cat $q) > /tmp/$s-c.out 2>&1
  echo "== $s SF1, every query in one process, GPU against the CPU backend: $(wc -l < /tmp/$s-g.out) lines, $(diff /tmp/$s-c.out /tmp/$s-g.out | grep -c '^[<>]') differ"
  diff /tmp/$s-c.out /tmp/$s-g.out | head -6
done
} > $OUT/log6-q08.txt 2>&1
cat $OUT/log6-q08.txt
bash $S answers > $OUT/log6-answers.txt 2>&1
grep -vE "^(WARNING|ERROR)" $OUT/log6-answers.txt | tail -12
date -u
