#!/usr/bin/env bash
# Run 9 of 2026-11-30c: TESSERA_EXP_MERGE_SINK=1 (m: a kernel summing into global group
# arrays adds each item's value in the loop that loaded its payloads; q3.1's probe 32
# registers instead of 40 when compiled here) against the defaults (d), one binary. GPU
# unit tests; SSB and TPC-H SF 1 answers under m; every SSB SF 20 query's kernels, 5
# EXPLAIN ANALYZE each, 2 rounds a setting in turns; Nsight Compute on q3.1's probe (d, m);
# SSB SF 20 bench, 15 warm runs x 4 rounds in turns; TPC-H SF 10, 5 warm runs, d m m d.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log9-tests.txt
( grep -q lineorder /tmp/tdturns20/bench/ssb-sf20/manifest.json 2>/dev/null || { rm -rf /tmp/tdturns20; $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1; } ) &
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^  left|^ right"; done >> $OUT/log9-tests.txt 2>&1
cat $OUT/log9-tests.txt
wait
P=/tmp/tdturns20/bench/ssb-sf20
{ for m in 1 0; do echo "== SF1 answers checked, TESSERA_EXP_MERGE_SINK=$m (lines without a check mark only)"
  for s in ssb tpch; do TESSERA_EXP_MERGE_SINK=$m $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -12; done; done; } > $OUT/log9-answers.txt 2>&1
cat $OUT/log9-answers.txt
f=/tmp/analyze.sql; : > $f
for q in benchmarks/ssb/q*.sql; do s=$(sed '/^--/d' $q | tr '\n' ' ' | sed 's/;\s*$//'); echo "$s;" >> $f; echo "$s;" >> $f; for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
declare -A E=([d]=0 [m]=1)
for round in 1 2; do for s in d m; do echo "== $s round $round"; TESSERA_EXP_MERGE_SINK=${E[$s]} $X --format csv --data-dir $P sql $f 2>&1 | grep -oE "GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|rror.*"; done; done > $OUT/log9-variants.txt 2>&1
python3 - $OUT/log9-variants.txt > $OUT/log9-medians.txt <<'PY'
import re, sys, statistics as st
qs = "q1.1 q1.2 q1.3 q2.1 q2.2 q2.3 q3.1 q3.2 q3.3 q3.4 q4.1 q4.2 q4.3".split()
cur = None; k = {}
for line in open(sys.argv[1]):
    m = re.match(r"== (\S+) round (\d+)", line)
    if m: cur = m.group(1); n = 0; continue
    m = re.search(r"GPU kernels: ([0-9.]+) ms in total, bandwidth model ([0-9.]+)", line)
    if m and cur and n // 5 < len(qs):
        k.setdefault((cur, qs[n // 5]), []).append((float(m.group(1)), float(m.group(2)))); n += 1
for s in ["d", "m"]:
    tot = 0; row = []
    for q in qs:
        v = k.get((s, q), [])
        if not v: row.append(f"{q} -"); continue
        med = st.median(x[0] for x in v); tot += med
        row.append(f"{q} {med:.3f} ({med / v[0][1]:.2f}x)")
    print(f"{s}: total {tot:.3f} ms | " + " | ".join(row))
PY
cat $OUT/log9-medians.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for m in 0 1; do echo "== ncu q3.1 probe, TESSERA_EXP_MERGE_SINK=$m"
TESSERA_EXP_MERGE_SINK=$m $NCU --clock-control none --kernel-name tessera_pipeline --launch-skip 3 --launch-count 1 \
  --metrics gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size,launch__occupancy_limit_registers \
  $X --data-dir $P -c "$(sed '/^--/d' benchmarks/ssb/q3.1.sql)" 2>&1 | grep -vE "^==PROF==|^\s*$|^│|^┌|^└|^╞|^├|^\s*-+\s" | tail -9; done > $OUT/log9-ncu.txt 2>&1
cat $OUT/log9-ncu.txt
mkdir -p /tmp/t9
OUT=/tmp/t9 SETTINGS="d m:TESSERA_EXP_MERGE_SINK=1" ROUNDS=4 bash $S turns > $OUT/log9-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log9-turns.txt | tail -20
( cd /tmp && tar -czf $OUT/run9-json.tgz t9 )
[ -d /tmp/tdh10/bench/tpch-sf10 ] || $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1
for m in 0 1 1 0; do
  TESSERA_EXP_MERGE_SINK=$m $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 5 --engine tessera 2>&1 | grep -E "^│ (q[0-9]+|total)" > /tmp/tp.txt
  echo "== TPC-H SF10 TESSERA_EXP_MERGE_SINK=$m"; cat /tmp/tp.txt
done > $OUT/log9-tpch.txt 2>&1
grep -E "==|total" $OUT/log9-tpch.txt
date -u
