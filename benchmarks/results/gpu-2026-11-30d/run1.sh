#!/usr/bin/env bash
# Run 1 of 2026-11-30d: kernel graphs with the fold of group copies, on by default (d)
# against TESSERA_EXP_KERNEL_GRAPH=0 (g0); tables over half the GPU memory limit go up
# compact (lim: SET tessera.gpu_memory_limit low enough). GPU unit tests; SSB and TPC-H SF 1
# answers on the CPU backend, the GPU (d, g0) and the GPU under a limit, compared; every SSB
# SF 20 query's kernels, 5 EXPLAIN ANALYZE each, 2 rounds of d, g0 and lim ('12GB').
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log1-tests.txt
( grep -q lineorder /tmp/tdturns20/bench/ssb-sf20/manifest.json 2>/dev/null || { rm -rf /tmp/tdturns20; $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1; } ) &
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^  left|^ right"; done >> $OUT/log1-tests.txt 2>&1
cat $OUT/log1-tests.txt
# SF 1: the bench makes the stores and checks the defaults' answers.
{ for s in ssb tpch; do echo "== $s SF1 bench, defaults (lines without a check mark only)"
  $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -12; done
  for s in ssb tpch; do
    D=/tmp/td${s}1/bench/$s-sf1; lim=600MB; [ $s = tpch ] && lim=1GB
    q=/tmp/$s-q.sql; : > $q
    for f in benchmarks/$s/q*.sql; do echo "$(sed '/^--/d' $f | tr '\n' ' ' | sed 's/;\s*$//');" >> $q; done
    last=$(tail -1 $q)
    { echo "SET tessera.device = 'cpu';"; cat $q; } > /tmp/$s-cpu.sql
    { cat $q; echo "EXPLAIN ANALYZE $last"; } > /tmp/$s-d.sql
    { echo "SET tessera.gpu_memory_limit = '$lim';"; cat $q; echo "EXPLAIN ANALYZE $last"; } > /tmp/$s-lim.sql
    $X --format csv --data-dir $D sql /tmp/$s-cpu.sql > /tmp/$s-cpu.out 2> /tmp/$s-cpu.err
    for m in d lim; do $X --format csv --data-dir $D sql /tmp/$s-$m.sql > /tmp/$s-$m.all 2> /tmp/$s-$m.err; head -n $(wc -l < /tmp/$s-cpu.out) /tmp/$s-$m.all > /tmp/$s-$m.out; done
    TESSERA_EXP_KERNEL_GRAPH=0 $X --format csv --data-dir $D sql /tmp/$s-d.sql > /tmp/$s-g0.all 2> /tmp/$s-g0.err; head -n $(wc -l < /tmp/$s-cpu.out) /tmp/$s-g0.all > /tmp/$s-g0.out
    cat /tmp/$s-*.err | sort | uniq -c | head -5
    for m in d lim g0; do echo "== $s SF1 $m against the CPU backend: $(wc -l < /tmp/$s-cpu.out) lines, $(diff /tmp/$s-cpu.out /tmp/$s-$m.out | grep -c '^[<>]') differ"; done
    for m in d lim; do echo "== $s SF1 $m: $(cat /tmp/$s-$m.all /tmp/$s-$m.err | grep -oE "GPU column cache [0-9.]+ MB in [0-9]+ columns|rror.*" | head -3 | paste -sd' ')"; done
  done; } > $OUT/log1-answers.txt 2>&1
cat $OUT/log1-answers.txt
for s in ssb tpch; do diff /tmp/$s-cpu.out /tmp/$s-lim.out | head -20; done > $OUT/log1-diffs.txt 2>&1
wait
P=/tmp/tdturns20/bench/ssb-sf20
f=/tmp/analyze.sql; : > $f
for q in benchmarks/ssb/q*.sql; do s=$(sed '/^--/d' $q | tr '\n' ' ' | sed 's/;\s*$//'); echo "$s;" >> $f; echo "$s;" >> $f; for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
{ echo "SET tessera.gpu_memory_limit = '12GB';"; cat $f; } > /tmp/analyze-lim.sql
for round in 1 2; do for s in d g0 lim; do echo "== $s round $round"
  case $s in d) $X --format csv --data-dir $P sql $f;; g0) TESSERA_EXP_KERNEL_GRAPH=0 $X --format csv --data-dir $P sql $f;; lim) $X --format csv --data-dir $P sql /tmp/analyze-lim.sql;; esac 2>&1 | grep -oE "GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB|rror.*"
done; done > $OUT/log1-variants.txt 2>&1
python3 - $OUT/log1-variants.txt > $OUT/log1-medians.txt <<'PY'
import re, sys, statistics as st
qs = "q1.1 q1.2 q1.3 q2.1 q2.2 q2.3 q3.1 q3.2 q3.3 q3.4 q4.1 q4.2 q4.3".split()
cur = None; k = {}; cache = {}
for line in open(sys.argv[1]):
    m = re.match(r"== (\S+) round (\d+)", line)
    if m: cur = m.group(1); n = 0; continue
    m = re.search(r"GPU column cache ([0-9.]+) MB", line)
    if m and cur: cache[cur] = float(m.group(1))
    m = re.search(r"GPU kernels: ([0-9.]+) ms in total, bandwidth model ([0-9.]+)", line)
    if m and cur and n // 5 < len(qs):
        k.setdefault((cur, qs[n // 5]), []).append((float(m.group(1)), float(m.group(2)))); n += 1
for s in ["d", "g0", "lim"]:
    tot = 0; row = []
    for q in qs:
        v = k.get((s, q), [])
        if not v: row.append(f"{q} -"); continue
        med = st.median(x[0] for x in v); tot += med
        row.append(f"{q} {med:.3f} ({med / v[0][1]:.3f}x of {v[0][1]:.3f})")
    print(f"{s}: total {tot:.3f} ms, column cache {cache.get(s)} MB | " + " | ".join(row))
PY
cat $OUT/log1-medians.txt
date -u
