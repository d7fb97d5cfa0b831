#!/usr/bin/env bash
# Run 3 of 2026-11-29 (the pack of 14e5d2f: a warm run's kernel and its timing events as
# one CUDA graph, TESSERA_EXP_KERNEL_GRAPH=0 for the three driver calls as before): the
# GPU unit tests; `bench launches` (with the new "timed graph" way); SSB SF 20's probe
# kernels by EXPLAIN ANALYZE both ways (the graph's events must time what the plain
# ones do); a traced pass each way; then gpu-suite.sh ab of the two (SSB SF 20 15 warm
# runs, TPC-H SF 10 3; 2 rounds in turns; SSB and TPC-H SF 1 answers checked both ways).
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped"; done > $OUT/log3-tests.txt 2>&1
cat $OUT/log3-tests.txt
$X bench launches --json /tmp/j3-launches.json > $OUT/log3-launches.txt 2>&1; cat $OUT/log3-launches.txt
[ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
for q in benchmarks/ssb/q*.sql; do echo "$(basename $q .sql)|$(sed '/^--/d' $q | tr '\n' ' ' | sed 's/;\s*$//')"; done > /tmp/variants.txt
variants() {
  while IFS='|' read -r name q; do
    f=/tmp/v.sql; : > $f
    echo "$q;" >> $f; echo "$q;" >> $f
    for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $q;" >> $f; done
    $X --format csv --data-dir /tmp/td20/bench/ssb-sf20 sql $f > /tmp/v-$1-$name.txt 2>&1
    k=$(grep -E "kernel [0-9.]+ ms" /tmp/v-$1-$name.txt | grep -E "[0-9]{8,} rows in" | grep -oE "kernel [0-9.]+" | awk '{print $2}' | sort -n | paste -sd" ")
    e=$(grep -ciE "error|panick" /tmp/v-$1-$name.txt)
    echo "$1 $name $k errors=$e"
  done < /tmp/variants.txt
}
{ variants g; TESSERA_EXP_KERNEL_GRAPH=0 variants p; } > $OUT/log3-variants.txt 2>&1
awk '{n=NF-1; split("",a); c=0; for(i=3;i<=n;i++){c++; a[c]=$i}; m=(c>0)?a[int((c+1)/2)]:"-"; print $1, $2, m}' $OUT/log3-variants.txt | paste -sd' ' | fold -w 2000
grep -h "graph\|launched" /tmp/v-g-q3.1.txt | head -3 | cut -c1-600
T=benchmarks/results/gpu-2026-11-27j/trace.py
for e in g p; do
  ( [ $e = p ] && export TESSERA_EXP_KERNEL_GRAPH=0
    TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera 2>&1 | grep "^trace" | gzip > /tmp/log3-trace-$e.txt.gz )
  { python3 $T /tmp/log3-trace-$e.txt.gz; python3 $T --phases /tmp/log3-trace-$e.txt.gz; } > /tmp/log3-trace-table-$e.txt 2>&1
  echo "trace $e: $(grep '^sum over' /tmp/log3-trace-table-$e.txt | tail -1)"
done | tee $OUT/log3-trace-sums.txt
[ -e /tmp/tdssb20 ] || ln -s /tmp/td20 /tmp/tdssb20
mkdir -p /tmp/ab3; AB=TESSERA_EXP_KERNEL_GRAPH=0 ROUNDS=2 SSB_RUNS=15 OUT=/tmp/ab3 bash benchmarks/device/gpu-suite.sh ab > $OUT/log3-ab.txt 2>&1
tail -32 $OUT/log3-ab.txt
cp /tmp/log3-trace-table-*.txt /tmp/ab3/; cp /tmp/j3-launches.json /tmp/ab3/
tar -C /tmp -czf $OUT/run3-json.tgz ab3
date -u
