#!/usr/bin/env bash
# Run 1 of 2026-11-30b: items a thread for every pipeline (SET
# tessera.gpu_items_per_thread = 0 (chosen per pipeline, the default) | 2 | 3 | 4) on the
# code of 6da3898: SSB SF 20, every query's kernels, 5 EXPLAIN ANALYZE each in one
# process per setting, 2 rounds (log1-medians.txt); Nsight Compute on q3.1's probe with
# 2 (its default) and 4 items (duration, DRAM bytes, registers, occupancy).
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log1-items.txt
[ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
P=/tmp/tdturns20/bench/ssb-sf20
date -u >> $OUT/log1-items.txt
for n in 0 2 3 4; do
  f=/tmp/analyze$n.sql; echo "SET tessera.gpu_items_per_thread = $n;" > $f
  for q in benchmarks/ssb/q*.sql; do s=$(sed '/^--/d' $q | tr '\n' ' ' | sed 's/;\s*$//'); echo "$s;" >> $f; echo "$s;" >> $f; for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
done
for round in 1 2; do
  for n in 0 2 3 4; do
    echo "== i$n round $round"
    $X --format csv --data-dir $P sql /tmp/analyze$n.sql 2>&1 | grep -oE "GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|rror.*"
  done
done > $OUT/log1-variants.txt 2>&1
python3 - $OUT/log1-variants.txt > $OUT/log1-medians.txt <<'PY'
import re, sys, statistics as st
qs = "q1.1 q1.2 q1.3 q2.1 q2.2 q2.3 q3.1 q3.2 q3.3 q3.4 q4.1 q4.2 q4.3".split()
cur = None; k = {}
for line in open(sys.argv[1]):
    m = re.match(r"== (\S+) round (\d+)", line)
    if m: cur = m.group(1); n = 0; continue
    m = re.search(r"GPU kernels: ([0-9.]+) ms in total, bandwidth model ([0-9.]+)", line)
    if m and cur and n // 5 < len(qs):
        k.setdefault((cur, qs[n // 5]), []).append((float(m.group(1)), float(m.group(2)))); n += 1
for s in ["i0", "i2", "i3", "i4"]:
    tot = 0; row = []
    for q in qs:
        v = k.get((s, q), [])
        if not v: row.append(f"{q} -"); continue
        med = st.median(x[0] for x in v); tot += med
        row.append(f"{q} {med:.3f} ({med / v[0][1]:.2f}x)")
    print(f"{s}: total {tot:.3f} ms | " + " | ".join(row))
PY
cat $OUT/log1-medians.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
q="$(sed '/^--/d' benchmarks/ssb/q3.1.sql | tr '\n' ' ' | sed 's/;\s*$//')"
for n in 0 4; do
  echo "SET tessera.gpu_items_per_thread = $n;" > /tmp/q31-$n.sql; echo "$q;" >> /tmp/q31-$n.sql
  echo "== ncu q3.1 probe, items $n"
  $NCU --clock-control none --kernel-name tessera_pipeline --launch-skip 3 --launch-count 1 \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,launch__occupancy_limit_registers \
    $X --data-dir $P sql /tmp/q31-$n.sql 2>&1 | grep -vE "^==PROF==|^\s*$|^│|^┌|^└|^╞|^├|^\s*-+\s" | tail -9
done > $OUT/log1-ncu.txt 2>&1
cat $OUT/log1-ncu.txt
date -u
