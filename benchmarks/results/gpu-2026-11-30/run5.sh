#!/usr/bin/env bash
# Run 5 of 2026-11-30: kernels that ptxas compiles with register spills compiled again
# under a register cap (`compile::compile_cubin`; TESSERA_EXP_SPILL_RETRY=0 keeps the
# first result, as before). GPU unit tests; SSB and TPC-H SF 1 answers checked with the
# defaults; every kernel SSB SF 20 and TPC-H SF 1 compile, with ptxas's report of the
# first compilation and of the one kept (kernels-run5.tgz, log5-spills.txt); SSB SF 20
# d, s0 (no retry), b8 (bit-packed) and b8s0, 15 warm runs x 3 rounds in turns; TPC-H
# SF 10 d and s0, 5 warm runs, twice each.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log5-tests.txt
( [ -d /tmp/tdh10/bench/tpch-sf10 ] || $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1 ) &
gen=$!
[ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
P=/tmp/tdturns20/bench/ssb-sf20
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^called|^  left|^ right"; done >> $OUT/log5-tests.txt 2>&1
cat $OUT/log5-tests.txt
{ echo "== SF1 answers checked with the defaults (lines without a check mark only)"
  for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done; } > $OUT/log5-answers.txt 2>&1
cat $OUT/log5-answers.txt
# Every kernel of the two suites, first compilation (s0) and the one kept (d), with reports.
for e in 0 1; do
  for s in ssb:/tmp/tdturns20/bench/ssb-sf20:20 tpch:/tmp/tdtpch1/bench/tpch-sf1:1; do
    IFS=: read name dir sf <<< "$s"; [ -d $dir ] || continue
    rm -rf $dir/kernels
    f=/tmp/all-$name.sql; : > $f; for q in benchmarks/$name/q*.sql; do sed '/^--/d' $q >> $f; echo >> $f; done
    for bits in 0 8; do TESSERA_EXP_NARROW_BITS=$bits TESSERA_DUMP_KERNELS=/tmp/kd/retry$e-bits$bits-$name TESSERA_EXP_SPILL_RETRY=$e $X --format csv --data-dir $dir sql $f > /dev/null 2>&1; done
  done
done
for d in /tmp/kd/*; do echo "== $(basename $d): $(ls $d/*.ptxas | wc -l) kernels, $(grep -l 'spill stores [1-9]' $d/*.ptxas | wc -l) with spills"; done > $OUT/log5-spills.txt
cat $OUT/log5-spills.txt
tar -C /tmp -czf $OUT/kernels-run5.tgz kd
wait $gen
mkdir -p /tmp/t5
OUT=/tmp/t5 SETTINGS="d s0:TESSERA_EXP_SPILL_RETRY=0 b8:TESSERA_EXP_NARROW_BITS=8 b8s0:TESSERA_EXP_NARROW_BITS=8,TESSERA_EXP_SPILL_RETRY=0" ROUNDS=3 bash $S turns > $OUT/log5-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log5-turns.txt | tail -20
tar -C /tmp -czf $OUT/run5-json.tgz t5
for e in 1 0 1 0; do
  TESSERA_EXP_SPILL_RETRY=$e $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 5 --engine tessera --json $OUT/tpch10-retry$e-$RANDOM.json 2>&1 | grep -E "^│ (q[0-9]+|total)" > /tmp/tp.txt
  echo "== TPC-H SF10 TESSERA_EXP_SPILL_RETRY=$e"; cat /tmp/tp.txt
done > $OUT/log5-tpch.txt 2>&1
grep -E "==|total" $OUT/log5-tpch.txt
date -u
