#!/usr/bin/env bash
# Run 2 of 2026-11-29 (the pack of 46278d7): SSB SF 20's probe kernels, five EXPLAIN
# ANALYZE each in one process per query and setting, under the eager-load threshold
# (TESSERA_EXP_EAGER_SECTORS: the default 0.25, 0.2, 0.15, 0.1) and 4 items a thread.
# Question: does q3.1 (1.4-1.6x its model) gain from loading lo_revenue up front, and
# what does that cost the others.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u
[ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
for q in benchmarks/ssb/q*.sql; do echo "$(basename $q .sql)|$(sed '/^--/d' $q | tr '\n' ' ' | sed 's/;\s*$//')"; done > /tmp/variants.txt
# $1: the setting's name, $2: statements before the query (a SET or nothing).
variants() {
  while IFS='|' read -r name q; do
    f=/tmp/v.sql; echo "$2" > $f
    echo "$q;" >> $f; echo "$q;" >> $f
    for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $q;" >> $f; done
    $X --format csv --data-dir /tmp/td20/bench/ssb-sf20 sql $f > /tmp/v-$1-$name.txt 2>&1
    k=$(grep -E "kernel [0-9.]+ ms" /tmp/v-$1-$name.txt | grep -E "[0-9]{8,} rows in" | grep -oE "kernel [0-9.]+" | awk '{print $2}' | sort -n | paste -sd" ")
    e=$(grep -ciE "error|panick" /tmp/v-$1-$name.txt)
    echo "$1 $name $k errors=$e"
  done < /tmp/variants.txt
}
{
variants d ""
TESSERA_EXP_EAGER_SECTORS=0.2 variants e20 ""
TESSERA_EXP_EAGER_SECTORS=0.15 variants e15 ""
TESSERA_EXP_EAGER_SECTORS=0.1 variants e10 ""
variants i4 "SET tessera.gpu_items_per_thread = 4;"
TESSERA_EXP_EAGER_SECTORS=0.1 variants e10i4 "SET tessera.gpu_items_per_thread = 4;"
variants d2 ""
} > $OUT/log2-variants.txt 2>&1
awk '{n=NF-1; split("",a); c=0; for(i=3;i<=n;i++){c++; a[c]=$i}; m=(c>0)?a[int((c+1)/2)]:"-"; print $1, $2, m}' $OUT/log2-variants.txt > $OUT/log2-medians.txt
python3 - $OUT/log2-medians.txt <<'PY' | tee $OUT/log2-table.txt
import sys, collections
t = collections.defaultdict(dict); qs = []
for line in open(sys.argv[1]):
    s, q, m = line.split()
    t[s][q] = m
    if q not in qs: qs.append(q)
sets = list(t)
print("query".ljust(10) + "".join(s.rjust(8) for s in sets))
for q in qs: print(q.ljust(10) + "".join(t[s].get(q, "-").rjust(8) for s in sets))
print("sum".ljust(10) + "".join(str(round(sum(float(t[s][q]) for q in qs if t[s].get(q, "-") != "-"), 3)).rjust(8) for s in sets))
PY
grep -c "errors=0" $OUT/log2-variants.txt
# q3.1's kernel under each setting, for reading its loads.
mkdir -p /tmp/k2; for e in 0.25 0.1; do TESSERA_EXP_EAGER_SECTORS=$e TESSERA_DUMP_KERNELS=/tmp/k2/e$e $X --format csv --data-dir /tmp/td20/bench/ssb-sf20 -c "$(sed '/^--/d' benchmarks/ssb/q3.1.sql)" > /dev/null 2>&1; done
tar -C /tmp -czf $OUT/run2-kernels.tgz k2
date -u
