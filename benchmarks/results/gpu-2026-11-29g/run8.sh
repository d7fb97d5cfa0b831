#!/usr/bin/env bash
# Run 8 of 2026-11-29g: a variant not kept, whose bit-packed columns found a tile's words
# from q * w (q = tile / 128: word (q * w / 32) * 128 + t, bit q * w % 32) instead of
# through groups of 32 values (the same layout). GPU unit tests; SSB and TPC-H SF 1
# answers under TESSERA_EXP_NARROW_BITS=8; SSB SF 20 with the defaults (d) and =8 (b8),
# 15 warm runs x 4 rounds in turns; Nsight Compute on q3.1's probe under =8; TPC-H SF 10
# d and b8, 5 warm runs each.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log8-tests.txt
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^called|^  left|^ right"; done >> $OUT/log8-tests.txt 2>&1
cat $OUT/log8-tests.txt
( [ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1 ) &
gen=$!
{ for e in TESSERA_EXP_NARROW_BITS=8; do
    echo "== SF1 answers checked under $e (lines without a check mark only)"
    for s in ssb tpch; do env $e $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
  done; } > $OUT/log8-answers.txt 2>&1
cat $OUT/log8-answers.txt
wait $gen
mkdir -p /tmp/t8
OUT=/tmp/t8 SETTINGS="d b8:TESSERA_EXP_NARROW_BITS=8" ROUNDS=4 bash $S turns > $OUT/log8-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log8-turns.txt | tail -20
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
P=/tmp/tdturns20/bench/ssb-sf20
for qs in q3.1:3 q4.2:4; do
  q=${qs%:*}; skip=${qs#*:}
  echo "== ncu $q probe, TESSERA_EXP_NARROW_BITS=8"
  TESSERA_EXP_NARROW_BITS=8 $NCU --clock-control none --kernel-name tessera_pipeline --launch-skip $skip --launch-count 1 \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum,launch__registers_per_thread \
    $X --data-dir $P -c "$(sed '/^--/d' benchmarks/ssb/$q.sql)" 2>&1 | grep -vE "^==PROF==|^\s*$|^│|^┌|^└|^╞|^├|^\s*-+\s" | tail -3
done > $OUT/log8-ncu.txt 2>&1
cat $OUT/log8-ncu.txt
[ -d /tmp/tdh10/bench/tpch-sf10 ] || $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1
for e in d b8; do
  ( case $e in b8) export TESSERA_EXP_NARROW_BITS=8;; esac
    $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 5 --engine tessera --json /tmp/t8/tpch10-$e.json 2>&1 | grep -E "^│ (q[0-9]+|total)" ) > /tmp/tp.txt
  echo "== TPC-H SF10 $e"; cat /tmp/tp.txt
done > $OUT/log8-tpch.txt 2>&1
grep -E "==|total" $OUT/log8-tpch.txt
tar -C /tmp -czf $OUT/run8-json.tgz t8
date -u
