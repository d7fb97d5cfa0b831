#!/usr/bin/env bash
# Run 8 of 2026-11-30: membership bitmaps' words read under other cache policies
# (TESSERA_EXP_BITMAP_LOADS: 1 ld.global.nc.L1::evict_last, 2 ld.global.ca, 3
# ld.global.L1::evict_last) against __ldg. GPU unit tests; SSB SF 1 answers under each;
# Nsight Compute on q3.1's probe under each (duration, L1 hit rate); every SSB SF 20
# query's kernels, 5 EXPLAIN ANALYZE each in one process per setting, 2 rounds.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log8-tests.txt
[ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
P=/tmp/tdturns20/bench/ssb-sf20
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^called|^  left|^ right"; done >> $OUT/log8-tests.txt 2>&1
cat $OUT/log8-tests.txt
{ for e in 1 2 3; do echo "== SSB SF1 answers checked under TESSERA_EXP_BITMAP_LOADS=$e (lines without a check mark only)"
  TESSERA_EXP_BITMAP_LOADS=$e $X --data-dir /tmp/tdssb1 bench ssb --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done; } > $OUT/log8-answers.txt 2>&1
cat $OUT/log8-answers.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for e in 0 1 2 3; do
  echo "== ncu q3.1 probe, TESSERA_EXP_BITMAP_LOADS=$e"
  TESSERA_EXP_BITMAP_LOADS=$e $NCU --clock-control none --kernel-name tessera_pipeline --launch-skip 3 --launch-count 1 \
    --metrics gpu__time_duration.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,smsp__inst_executed.sum \
    $X --data-dir $P -c "$(sed '/^--/d' benchmarks/ssb/q3.1.sql)" 2>&1 | grep -vE "^==PROF==|^\s*$|^│|^┌|^└|^╞|^├|^\s*-+\s" | tail -5
done > $OUT/log8-ncu.txt 2>&1
cat $OUT/log8-ncu.txt
f=/tmp/analyze.sql; : > $f
for q in benchmarks/ssb/q*.sql; do s=$(sed '/^--/d' $q | tr '\n' ' ' | sed 's/;\s*$//'); echo "$s;" >> $f; echo "$s;" >> $f; for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
for round in 1 2; do
  for s in 0 1 2 3; do
    echo "== bl$s round $round"
    TESSERA_EXP_BITMAP_LOADS=$s $X --format csv --data-dir $P sql $f 2>&1 | grep -oE "GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|rror.*"
  done
done > $OUT/log8-variants.txt 2>&1
python3 - $OUT/log8-variants.txt > $OUT/log8-medians.txt <<'PY'
import re, sys, statistics as st
qs = "q1.1 q1.2 q1.3 q2.1 q2.2 q2.3 q3.1 q3.2 q3.3 q3.4 q4.1 q4.2 q4.3".split()
cur = None; k = {}
for line in open(sys.argv[1]):
    m = re.match(r"== (\S+) round (\d+)", line)
    if m: cur = m.group(1); n = 0; continue
    m = re.search(r"GPU kernels: ([0-9.]+) ms in total, bandwidth model ([0-9.]+)", line)
    if m and cur and n // 5 < len(qs):
        k.setdefault((cur, qs[n // 5]), []).append((float(m.group(1)), float(m.group(2)))); n += 1
for s in ["bl0", "bl1", "bl2", "bl3"]:
    tot = 0; row = []
    for q in qs:
        v = k.get((s, q), [])
        if not v: row.append(f"{q} -"); continue
        med = st.median(x[0] for x in v); tot += med
        row.append(f"{q} {med:.3f} ({med / v[0][1]:.2f}x)")
    print(f"{s}: total {tot:.3f} ms | " + " | ".join(row))
PY
cat $OUT/log8-medians.txt
date -u
