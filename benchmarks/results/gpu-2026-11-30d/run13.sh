#!/usr/bin/env bash
# Run 13 of 2026-11-30d (a column of runs read first by every row loaded up front even
# alone). GPU unit tests; SSB and TPC-H SF 1 under a memory limit (compact) against the
# CPU backend; SSB SF 20, 5 EXPLAIN ANALYZE a query, defaults (d) and under '12GB' (lim);
# Nsight Compute on q1.1's and q1.3's probes under lim.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log13-tests.txt
( grep -q lineorder /tmp/tdturns20/bench/ssb-sf20/manifest.json 2>/dev/null || { rm -rf /tmp/tdturns20; $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1; } ) &
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^  left|^ right"; done >> $OUT/log13-tests.txt 2>&1
cat $OUT/log13-tests.txt
{ for s in ssb tpch; do
    [ -d /tmp/td${s}1/bench/$s-sf1 ] || $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera > /dev/null 2>&1
    D=/tmp/td${s}1/bench/$s-sf1; lim=600MB; [ $s = tpch ] && lim=1GB
    q=/tmp/$s-q.sql; : > $q
    for f in benchmarks/$s/q*.sql; do echo "$(sed '/^--/d' $f | tr '\n' ' ' | sed 's/;\s*$//');" >> $q; done
    $X --format csv --data-dir $D sql <(echo "SET tessera.device = 'cpu';"; cat $q) > /tmp/$s-cpu.out 2>&1
    $X --format csv --data-dir $D sql <(echo "SET tessera.gpu_memory_limit = '$lim';"; cat $q) > /tmp/$s-lim.out 2>&1
    echo "== $s SF1 under '$lim' against the CPU backend: $(wc -l < /tmp/$s-cpu.out) lines, $(diff /tmp/$s-cpu.out /tmp/$s-lim.out | grep -c '^[<>]') differ"
  done; } > $OUT/log13-answers.txt 2>&1
cat $OUT/log13-answers.txt
wait
P=/tmp/tdturns20/bench/ssb-sf20
an() { f=/tmp/an.sql; : > $f; [ -n "$1" ] && echo "SET tessera.gpu_memory_limit = '$1';" >> $f
  for q in benchmarks/ssb/q*.sql; do s=$(sed '/^--/d' $q | tr '\n' ' ' | sed 's/;\s*$//'); echo "$s;" >> $f; for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
  $X --format csv --data-dir $P sql $f 2>&1 | grep -oE "GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB|rror.*"; }
{ echo "== sf20 d round 1"; an ""; echo "== sf20 lim round 1"; an 12GB; } > $OUT/log13-variants.txt 2>&1
python3 - $OUT/log13-variants.txt > $OUT/log13-medians.txt <<'PY'
import re, sys, statistics as st
qs = "q1.1 q1.2 q1.3 q2.1 q2.2 q2.3 q3.1 q3.2 q3.3 q3.4 q4.1 q4.2 q4.3".split()
cur = None; k = {}; cache = {}
for line in open(sys.argv[1]):
    m = re.match(r"== (\S+ \S+) round (\d+)", line)
    if m: cur = m.group(1); n = 0; continue
    m = re.search(r"GPU column cache ([0-9.]+) MB", line)
    if m and cur: cache[cur] = float(m.group(1))
    m = re.search(r"GPU kernels: ([0-9.]+) ms in total, bandwidth model ([0-9.]+)", line)
    if m and cur and n // 5 < len(qs):
        k.setdefault((cur, qs[n // 5]), []).append((float(m.group(1)), float(m.group(2)))); n += 1
for s in ["sf20 d", "sf20 lim"]:
    tot = 0; mt = 0; row = []
    for q in qs:
        v = k.get((s, q), [])
        if not v: row.append(f"{q} -"); continue
        med = st.median(x[0] for x in v); tot += med; mt += v[0][1]
        row.append(f"{q} {med:.3f} ({med / v[0][1]:.3f}x of {v[0][1]:.3f})")
    print(f"{s}: total {tot:.3f} ms (model {mt:.3f}), column cache {cache.get(s)} MB | " + " | ".join(row))
PY
cat $OUT/log13-medians.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for q in q1.1 q1.3; do echo "== ncu $q lim"
  $NCU --clock-control none --kernel-name tessera_pipeline --launch-skip 1 --launch-count 1 \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active \
    $X --data-dir $P sql <(echo "SET tessera.gpu_memory_limit = '12GB'; $(sed '/^--/d' benchmarks/ssb/$q.sql | tr '\n' ' ')") 2>&1 | grep -vE "^==PROF==|^\s*$|^│|^┌|^└|^╞|^├|^\s*-+\s" | tail -6
done > $OUT/log13-ncu.txt 2>&1
cat $OUT/log13-ncu.txt
date -u
