#!/usr/bin/env bash
# Run 3 of 2026-11-30c: as run 1, with the small sort chain's seen flags read by warps
# (rounds of 32 coalesced slots counted by ballots, 16 rounds in flight) and group-key
# slots divided in 32 bits; new binary (n) against the 4cf8d54 one (o). Then SSB q3.1's
# kernels under the code generator's experiment switches (new binary, 7 EXPLAIN ANALYZE
# each, 2 rounds).
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
O=/tmp/tessera-gpu/old/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log3-tests.txt
( [ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1 ) &
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^  left|^ right"; done >> $OUT/log3-tests.txt 2>&1
cat $OUT/log3-tests.txt
wait
P=/tmp/tdturns20/bench/ssb-sf20
{ echo "== SF1 answers checked, new binary (lines without a check mark only)"
  for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -12; done; } > $OUT/log3-answers.txt 2>&1
cat $OUT/log3-answers.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
q="$(sed '/^--/d' benchmarks/ssb/q3.1.sql | tr '\n' ' ' | sed 's/;\s*$//')"
f=/tmp/q31x2.sql; : > $f; for i in 1 2; do echo "$q;" >> $f; done
for b in n o; do B=$X; [ $b = o ] && B=$O
  for k in tessera_small_sorted_records tessera_fold_copies; do echo "== $b $k"
    $NCU --clock-control none --kernel-name $k --launch-skip 1 --launch-count 1 \
      --metrics gpu__time_duration.sum,smsp__inst_executed.sum,launch__registers_per_thread,launch__grid_size,launch__block_size \
      $B --data-dir $P sql $f 2>&1 | grep -E "gpu__time|inst_exec|registers|grid_size|block_size"; done; done > $OUT/log3-ncu.txt 2>&1
cat $OUT/log3-ncu.txt
f=/tmp/analyze.sql; : > $f
for q in benchmarks/ssb/q*.sql; do s=$(sed '/^--/d' $q | tr '\n' ' ' | sed 's/;\s*$//'); echo "$s;" >> $f; echo "$s;" >> $f; for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
for round in 1 2; do for s in n o; do B=$X; [ $s = o ] && B=$O; echo "== $s round $round"; $B --format csv --data-dir $P sql $f 2>&1 | grep -oE "GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|rror.*"; done; done > $OUT/log3-variants.txt 2>&1
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
for s in ["n", "o"]:
    tot = 0; row = []
    for q in qs:
        v = k.get((s, q), [])
        if not v: row.append(f"{q} -"); continue
        med = st.median(x[0] for x in v); tot += med
        row.append(f"{q} {med:.3f} ({med / v[0][1]:.2f}x)")
    print(f"{s}: total {tot:.3f} ms | " + " | ".join(row))
PY
cat $OUT/log3-medians.txt
{ f=/tmp/q31x.sql; : > $f; echo "$q;" >> $f; echo "$q;" >> $f; for i in 1 2 3 4 5 6 7; do echo "EXPLAIN ANALYZE $q;" >> $f; done
  for round in 1 2; do
    for v in NONE TESSERA_EXP_CARRY=1 TESSERA_EXP_GLOBAL_COPIES=16 TESSERA_EXP_GLOBAL_COPIES=4 TESSERA_EXP_EAGER_SECTORS=0.15 TESSERA_EXP_PREFETCH=0 TESSERA_EXP_WARP_SKIP=0 TESSERA_EXP_EARLY_PROBES=0 TESSERA_EXP_COLUMN_LOADS=1 TESSERA_EXP_COLUMN_LOADS=2 TESSERA_EXP_COLUMN_LOADS=3 TESSERA_EXP_NARROW_PAYLOADS=32 TESSERA_EXP_PRESENCE=0 TESSERA_EXP_WIDE_BLOCKS=0 TESSERA_EXP_KERNEL_GRAPH=1; do
      t=$( ( [ $v = NONE ] || export $v; $X --format csv --data-dir $P sql $f 2>&1 | grep -oE "GPU kernels: [0-9.]+ ms" | grep -oE "[0-9.]+" | sort -n | sed -n 4p ) )
      echo "q3.1 $v round $round: kernels median $t ms"
    done
  done; } > $OUT/log3-q31exp.txt 2>&1
cat $OUT/log3-q31exp.txt
mkdir -p /tmp/t3
OUT=/tmp/t3 BIN_o=$O SETTINGS="n o" ROUNDS=4 bash $S turns > $OUT/log3-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log3-turns.txt | tail -24
cd /tmp && tar -czf $OUT/run3-json.tgz t3
date -u
