#!/usr/bin/env bash
# Run 6 of 2026-11-30b: blocks of 512 threads for generated kernels against 128, two
# binaries of the same code (commit after 5e05393 with the probe study) but for
# codegen::BLOCK_THREADS: b512 the pack's bin/tessera, b128 its bin/tessera128 (added to the pack by hand). The
# probe study (run 5) read its keys 4-7% faster with 512-1024 threads a block than with
# 128, at the same occupancy. SF 1 answers checked with b512; every SSB SF 20 query's
# kernels, 5 EXPLAIN ANALYZE each, 2 rounds a binary in turns; Nsight Compute on q3.1's
# probe with each; SSB SF 20 bench, 15 warm runs x 3 rounds in turns; TPC-H SF 10, 5 warm
# runs, each binary twice in turns; random queries with b512, 4 seeds x 80 s.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
X128=/tmp/tessera-gpu/bin/tessera128
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log6-answers.txt
( [ -d /tmp/tdh10/bench/tpch-sf10 ] || $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 > /dev/null 2>&1 ) &
gen=$!
[ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
P=/tmp/tdturns20/bench/ssb-sf20
{ echo "== SF1 answers checked with b512 (lines without a check mark only)"
  for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -12; done; } >> $OUT/log6-answers.txt 2>&1
cat $OUT/log6-answers.txt
f=/tmp/analyze.sql; : > $f
for q in benchmarks/ssb/q*.sql; do s=$(sed '/^--/d' $q | tr '\n' ' ' | sed 's/;\s*$//'); echo "$s;" >> $f; echo "$s;" >> $f; for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
declare -A B=([b128]=$X128 [b512]=$X)
for round in 1 2; do for s in b128 b512; do echo "== $s round $round"; ${B[$s]} --format csv --data-dir $P sql $f 2>&1 | grep -oE "GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|rror.*"; done; done > $OUT/log6-variants.txt 2>&1
python3 - $OUT/log6-variants.txt > $OUT/log6-medians.txt <<'PY'
import re, sys, statistics as st
qs = "q1.1 q1.2 q1.3 q2.1 q2.2 q2.3 q3.1 q3.2 q3.3 q3.4 q4.1 q4.2 q4.3".split()
cur = None; k = {}
for line in open(sys.argv[1]):
    m = re.match(r"== (\S+) round (\d+)", line)
    if m: cur = m.group(1); n = 0; continue
    m = re.search(r"GPU kernels: ([0-9.]+) ms in total, bandwidth model ([0-9.]+)", line)
    if m and cur and n // 5 < len(qs):
        k.setdefault((cur, qs[n // 5]), []).append((float(m.group(1)), float(m.group(2)))); n += 1
for s in ["b128", "b512"]:
    tot = 0; row = []
    for q in qs:
        v = k.get((s, q), [])
        if not v: row.append(f"{q} -"); continue
        med = st.median(x[0] for x in v); tot += med
        row.append(f"{q} {med:.3f} ({med / v[0][1]:.2f}x)")
    print(f"{s}: total {tot:.3f} ms | " + " | ".join(row))
PY
cat $OUT/log6-medians.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for s in b128 b512; do echo "== ncu q3.1 probe, $s"
$NCU --clock-control none --kernel-name tessera_pipeline --launch-skip 3 --launch-count 1 \
  --metrics gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size \
  ${B[$s]} --data-dir $P -c "$(sed '/^--/d' benchmarks/ssb/q3.1.sql)" 2>&1 | grep -vE "^==PROF==|^\s*$|^│|^┌|^└|^╞|^├|^\s*-+\s" | tail -8; done > $OUT/log6-ncu.txt 2>&1
cat $OUT/log6-ncu.txt
wait $gen
mkdir -p /tmp/t6
OUT=/tmp/t6 SETTINGS="b128 b512" BIN_b128=$X128 ROUNDS=3 bash $S turns > $OUT/log6-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log6-turns.txt | tail -12
tar -C /tmp -czf $OUT/run6-json.tgz t6
for s in b128 b512 b128 b512; do
  ${B[$s]} --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 5 --engine tessera 2>&1 | grep -E "^│ (q[0-9]+|total)" > /tmp/tp.txt
  echo "== TPC-H SF10 $s"; cat /tmp/tp.txt
done > $OUT/log6-tpch.txt 2>&1
grep -E "==|total" $OUT/log6-tpch.txt
SEEDS=4 SEED0=7400 NARROW_SEEDS=2 DIFFTEST_SECONDS=80 bash $S difftests > $OUT/log6-difftests.txt 2>&1
grep -vE "^(WARNING|ERROR)" $OUT/log6-difftests.txt | tail -8
date -u
