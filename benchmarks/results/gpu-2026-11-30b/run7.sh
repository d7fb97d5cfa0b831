#!/usr/bin/env bash
# Run 7 of 2026-11-30b: the committed rule (54f8bdd): blocks of 512 threads for star joins
# summing into global arrays (codegen::block_threads), d, against 128 everywhere,
# TESSERA_EXP_WIDE_BLOCKS=0 (w0), in one binary. GPU unit tests; SSB and TPC-H SF 1
# answers under both; every SSB SF 20 query's kernels, 5 EXPLAIN ANALYZE each, 2 rounds a
# setting in turns; Nsight Compute on q3.1's probe; SSB SF 20 bench, 15 warm runs x 4
# rounds in turns.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log7-tests.txt
[ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
P=/tmp/tdturns20/bench/ssb-sf20
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^  left|^ right"; done >> $OUT/log7-tests.txt 2>&1
cat $OUT/log7-tests.txt
{ for w in 1 0; do echo "== SF1 answers checked, TESSERA_EXP_WIDE_BLOCKS=$w (lines without a check mark only)"
  for s in ssb tpch; do TESSERA_EXP_WIDE_BLOCKS=$w $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -12; done; done; } > $OUT/log7-answers.txt 2>&1
cat $OUT/log7-answers.txt
f=/tmp/analyze.sql; : > $f
for q in benchmarks/ssb/q*.sql; do s=$(sed '/^--/d' $q | tr '\n' ' ' | sed 's/;\s*$//'); echo "$s;" >> $f; echo "$s;" >> $f; for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
declare -A E=([d]=1 [w0]=0)
for round in 1 2; do for s in d w0; do echo "== $s round $round"; TESSERA_EXP_WIDE_BLOCKS=${E[$s]} $X --format csv --data-dir $P sql $f 2>&1 | grep -oE "GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|rror.*"; done; done > $OUT/log7-variants.txt 2>&1
python3 - $OUT/log7-variants.txt > $OUT/log7-medians.txt <<'PY'
import re, sys, statistics as st
qs = "q1.1 q1.2 q1.3 q2.1 q2.2 q2.3 q3.1 q3.2 q3.3 q3.4 q4.1 q4.2 q4.3".split()
cur = None; k = {}
for line in open(sys.argv[1]):
    m = re.match(r"== (\S+) round (\d+)", line)
    if m: cur = m.group(1); n = 0; continue
    m = re.search(r"GPU kernels: ([0-9.]+) ms in total, bandwidth model ([0-9.]+)", line)
    if m and cur and n // 5 < len(qs):
        k.setdefault((cur, qs[n // 5]), []).append((float(m.group(1)), float(m.group(2)))); n += 1
for s in ["d", "w0"]:
    tot = 0; row = []
    for q in qs:
        v = k.get((s, q), [])
        if not v: row.append(f"{q} -"); continue
        med = st.median(x[0] for x in v); tot += med
        row.append(f"{q} {med:.3f} ({med / v[0][1]:.2f}x)")
    print(f"{s}: total {tot:.3f} ms | " + " | ".join(row))
PY
cat $OUT/log7-medians.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for w in 1 0; do echo "== ncu q3.1 probe, TESSERA_EXP_WIDE_BLOCKS=$w"
TESSERA_EXP_WIDE_BLOCKS=$w $NCU --clock-control none --kernel-name tessera_pipeline --launch-skip 3 --launch-count 1 \
  --metrics gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size \
  $X --data-dir $P -c "$(sed '/^--/d' benchmarks/ssb/q3.1.sql)" 2>&1 | grep -vE "^==PROF==|^\s*$|^│|^┌|^└|^╞|^├|^\s*-+\s" | tail -8; done > $OUT/log7-ncu.txt 2>&1
cat $OUT/log7-ncu.txt
mkdir -p /tmp/t7
OUT=/tmp/t7 SETTINGS="d w0:TESSERA_EXP_WIDE_BLOCKS=0" ROUNDS=4 bash $S turns > $OUT/log7-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log7-turns.txt | tail -24
cd /tmp && tar -czf $OUT/run7-json.tgz t7
date -u
