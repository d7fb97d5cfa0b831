#!/usr/bin/env bash
# Run 3 of 2026-11-30: lazily loaded columns prefetched after a pipeline's first test
# (TESSERA_EXP_LAZY_PREFETCH=1 into L2, =2 into L1) against the defaults. GPU unit tests;
# SSB and TPC-H SF 1 answers checked under =1 and =2; every SSB SF 20 query's kernels, 5
# EXPLAIN ANALYZE each in one process per setting, 2 rounds (log3-medians.txt); SSB SF 20
# d, lp1 and lp2 in turns, 15 warm runs x 3 rounds; Nsight Compute on q3.1's probe under
# lp1 (duration, DRAM bytes, stall samples per instruction); TPC-H SF 10 d and lp1, 5 warm
# runs, where its store is on the machine.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log3-tests.txt
[ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
P=/tmp/tdturns20/bench/ssb-sf20
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^called|^  left|^ right"; done >> $OUT/log3-tests.txt 2>&1
cat $OUT/log3-tests.txt
{ for e in 1 2; do echo "== SF1 answers checked under TESSERA_EXP_LAZY_PREFETCH=$e (lines without a check mark only)"
  for s in ssb tpch; do TESSERA_EXP_LAZY_PREFETCH=$e $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done; done; } > $OUT/log3-answers.txt 2>&1
cat $OUT/log3-answers.txt
f=/tmp/analyze.sql; : > $f
for q in benchmarks/ssb/q*.sql; do s=$(sed '/^--/d' $q | tr '\n' ' ' | sed 's/;\s*$//'); echo "$s;" >> $f; echo "$s;" >> $f; for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
declare -A E=([d]="" [lp1]="TESSERA_EXP_LAZY_PREFETCH=1" [lp2]="TESSERA_EXP_LAZY_PREFETCH=2")
for round in 1 2; do
  for s in d lp1 lp2; do
    echo "== $s round $round"
    env ${E[$s]} $X --format csv --data-dir $P sql $f 2>&1 | grep -oE "GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|rror.*"
  done
done > $OUT/log3-variants.txt 2>&1
python3 - $OUT/log3-variants.txt > $OUT/log3-medians.txt <<'PY'
import re, sys, statistics as st
qs = "q1.1 q1.2 q1.3 q2.1 q2.2 q2.3 q3.1 q3.2 q3.3 q3.4 q4.1 q4.2 q4.3".split()
cur = None; k = {}
for line in open(sys.argv[1]):
    m = re.match(r"== (\S+) round (\d+)", line)
    if m: cur = m.group(1); n = 0; continue
    m = re.search(r"GPU kernels: ([0-9.]+) ms in total, bandwidth model ([0-9.]+)", line)
    if m and cur and n // 5 < len(qs):
        k.setdefault((cur, qs[n // 5]), []).append((float(m.group(1)), float(m.group(2)))); n += 1
for s in ["d", "lp1", "lp2"]:
    tot = 0; row = []
    for q in qs:
        v = k.get((s, q), [])
        if not v: row.append(f"{q} -"); continue
        med = st.median(x[0] for x in v); tot += med
        row.append(f"{q} {med:.3f} ({med / v[0][1]:.2f}x)")
    print(f"{s}: total {tot:.3f} ms | " + " | ".join(row))
PY
cat $OUT/log3-medians.txt
mkdir -p /tmp/t3
OUT=/tmp/t3 SETTINGS="d lp1:TESSERA_EXP_LAZY_PREFETCH=1 lp2:TESSERA_EXP_LAZY_PREFETCH=2" ROUNDS=3 bash $S turns > $OUT/log3-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log3-turns.txt | tail -22
tar -C /tmp -czf $OUT/run3-json.tgz t3
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for e in 0 1; do
  echo "== ncu q3.1 probe, TESSERA_EXP_LAZY_PREFETCH=$e"
  TESSERA_EXP_LAZY_PREFETCH=$e $NCU --clock-control none --kernel-name tessera_pipeline --launch-skip 3 --launch-count 1 \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread \
    $X --data-dir $P -c "$(sed '/^--/d' benchmarks/ssb/q3.1.sql)" 2>&1 | grep -vE "^==PROF==|^\s*$|^│|^┌|^└|^╞|^├|^\s*-+\s" | tail -6
done > $OUT/log3-ncu.txt 2>&1
cat $OUT/log3-ncu.txt
if [ -d /tmp/tdh10/bench/tpch-sf10 ]; then
  for e in 0 1 0 1; do
    TESSERA_EXP_LAZY_PREFETCH=$e $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 5 --engine tessera --json $OUT/tpch10-lp$e-$RANDOM.json 2>&1 | grep -E "^│ (q[0-9]+|total)" > /tmp/tp.txt
    echo "== TPC-H SF10 TESSERA_EXP_LAZY_PREFETCH=$e"; cat /tmp/tp.txt
  done > $OUT/log3-tpch.txt 2>&1
  grep -E "==|total" $OUT/log3-tpch.txt
else echo "no TPC-H SF 10 store on this machine"; fi
date -u
