#!/usr/bin/env bash
# Run 8 of 2026-11-30f (pack D, the commit): SSB SF 100, every query's kernels, 3 EXPLAIN ANALYZE
# each after one plain run, under the default limit (d), under
# SET tessera.gpu_memory_limit = '64GB' (lim: lineorder compact) and so with
# TESSERA_EXP_ITEM_ROWS=0 (ir0: rows by number, as before), one process each, in turns
# over 2 rounds; the 13 answers of d and lim against the CPU backend's.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } > $OUT/log8-ssb100.txt
D=/tmp/td100/bench/ssb-sf100
grep -q lineorder $D/manifest.json 2>/dev/null || { rm -rf /tmp/td100; /usr/bin/time -f "gen+load %e s" $X --data-dir $D gen ssb --sf 100 --load 2>&1 | tail -2; } >> $OUT/log8-ssb100.txt 2>&1
q=/tmp/ssb100.sql; : > $q
for f in benchmarks/ssb/q*.sql; do echo "$(sed '/^--/d' $f | tr '\n' ' ' | sed 's/;\s*$//');" >> $q; done
f=/tmp/a100.sql; : > $f
while read -r s; do echo "$s" >> $f; for i in 1 2 3; do echo "EXPLAIN ANALYZE $s" >> $f; done; done < $q
{ echo "SET tessera.gpu_memory_limit = '64GB';"; cat $f; } > /tmp/a100-lim.sql
{ for round in 1 2; do for s in d lim ir0; do echo "== $s round $round"
  case $s in d) $X --format csv --data-dir $D sql $f;; lim) $X --format csv --data-dir $D sql /tmp/a100-lim.sql;; ir0) TESSERA_EXP_ITEM_ROWS=0 $X --format csv --data-dir $D sql /tmp/a100-lim.sql;; esac 2>&1 | grep -oE "GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB|rror.*"
done; done; } > $OUT/log8-variants.txt 2>&1
python3 - $OUT/log8-variants.txt > $OUT/log8-medians.txt <<'PY'
import re, sys, statistics as st
qs = "q1.1 q1.2 q1.3 q2.1 q2.2 q2.3 q3.1 q3.2 q3.3 q3.4 q4.1 q4.2 q4.3".split()
cur = None; k = {}; cache = {}
for line in open(sys.argv[1]):
    m = re.match(r"== (\S+) round (\d+)", line)
    if m: cur = m.group(1); n = 0; continue
    m = re.search(r"GPU column cache ([0-9.]+) MB", line)
    if m and cur: cache[cur] = float(m.group(1))
    m = re.search(r"GPU kernels: ([0-9.]+) ms in total, bandwidth model ([0-9.]+)", line)
    if m and cur and n // 3 < len(qs):
        k.setdefault((cur, qs[n // 3]), []).append((float(m.group(1)), float(m.group(2)))); n += 1
for s in ["d", "lim", "ir0"]:
    tot = 0; mt = 0; row = []
    for q in qs:
        v = k.get((s, q), [])
        if not v: row.append(f"{q} -"); continue
        med = st.median(x[0] for x in v); tot += med; mt += v[0][1]
        row.append(f"{q} {med:.3f} ({med / v[0][1]:.3f}x of {v[0][1]:.3f})")
    print(f"{s}: total {tot:.3f} ms (model {mt:.3f}), column cache {cache.get(s)} MB | " + " | ".join(row))
PY
{ echo "SET tessera.device = 'cpu';"; cat $q; } > /tmp/100-cpu.sql
{ echo "SET tessera.gpu_memory_limit = '64GB';"; cat $q; } > /tmp/100-lim.sql
$X --format csv --data-dir $D sql /tmp/100-cpu.sql > /tmp/100-cpu.out 2>&1
$X --format csv --data-dir $D sql $q > /tmp/100-d.out 2>&1
$X --format csv --data-dir $D sql /tmp/100-lim.sql > /tmp/100-lim.out 2>&1
for m in d lim; do echo "== answers $m against the CPU backend: $(wc -l < /tmp/100-$m.out) / $(wc -l < /tmp/100-cpu.out) lines, $(diff /tmp/100-cpu.out /tmp/100-$m.out | grep -c '^[<>]') differ"; done >> $OUT/log8-ssb100.txt
cat $OUT/log8-ssb100.txt $OUT/log8-medians.txt
date -u
