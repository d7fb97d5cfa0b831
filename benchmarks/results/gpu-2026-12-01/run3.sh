#!/usr/bin/env bash
# Run 3 of 2026-12-01 (pack C, 8115adf: the carried zone tests, two bits read). GPU unit
# tests (the new zone test among them); SSB and TPC-H SF 1 answers: CPU backend, d,
# always; random queries (`tessera difftest`, GPU against the CPU backend): 8 seeds at
# their defaults (4 of them narrowed to byte widths), then 8 with compact forms forced
# (TESSERA_EXP_NARROW_BITS=8, TESSERA_EXP_NARROW_RUNS=2), each stopped after 90 s.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } > $OUT/log3-tests.txt
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^  left|^ right|zone"; done >> $OUT/log3-tests.txt 2>&1
{ for s in ssb tpch; do
    [ -d /tmp/td${s}1/bench/$s-sf1 ] || $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera > /dev/null 2>&1
    D1=/tmp/td${s}1/bench/$s-sf1
    q=/tmp/$s-q.sql; : > $q
    for f in benchmarks/$s/q*.sql; do echo "$(sed '/^--/d' $f | tr '\n' ' ' | sed 's/;\s*$//');" >> $q; done
    $X --format csv --data-dir $D1 sql <(echo "SET tessera.device = 'cpu';"; cat $q) > /tmp/$s-cpu.out 2>&1
    $X --format csv --data-dir $D1 sql $q > /tmp/$s-d.out 2>&1
    $X --format csv --data-dir $D1 sql <(echo "SET tessera.gpu_compact_tables = 'always';"; cat $q) > /tmp/$s-c.out 2>&1
    for m in d c; do echo "== $s SF1 $m against the CPU backend: $(wc -l < /tmp/$s-cpu.out) lines, $(diff /tmp/$s-cpu.out /tmp/$s-$m.out | grep -c '^[<>]') differ"; done
  done; } >> $OUT/log3-tests.txt 2>&1
SEEDS=8 SEED0=9900 NARROW_SEEDS=4 DIFFTEST_SECONDS=90 bash benchmarks/device/gpu-suite.sh difftests > $OUT/log3-difftests-default.txt 2>&1
mv $OUT/difftests.tgz $OUT/difftests-run3-default.tgz 2>/dev/null
TESSERA_EXP_NARROW_BITS=8 TESSERA_EXP_NARROW_RUNS=2 SEEDS=8 SEED0=10000 DIFFTEST_SECONDS=90 bash benchmarks/device/gpu-suite.sh difftests > $OUT/log3-difftests-compact.txt 2>&1
mv $OUT/difftests.tgz $OUT/difftests-run3-compact.tgz 2>/dev/null
cat $OUT/log3-tests.txt
for f in $OUT/log3-difftests-*.txt; do echo "== $f"; grep -vE "^(WARNING|ERROR)" $f | tail -4; done
date -u
