#!/usr/bin/env bash
# Run 1 of 2026-11-29f: the pack whose GPU builds keep payload columns of a known range
# narrowed (codegen::build::payload_form: dictionary codes by their dictionary's size,
# other values by the statistics' range, 1, 2 or 4 bytes; probes add the reference
# back). GPU unit tests; SSB and TPC-H SF 1 answers and the slt files with the
# defaults (narrowed payloads on); SSB SF 20 q3.1, q2.1, q4.1 and q4.3 with the defaults
# (d) and with payloads at their widths (w: TESSERA_EXP_NARROW_PAYLOADS=0), two warm runs
# then 5 EXPLAIN ANALYZE each, twice in turns; SSB SF 20 d against w, 15 warm runs x 8
# rounds in turns.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^called|^  left|^ right"; done > $OUT/log1-tests.txt 2>&1
cat $OUT/log1-tests.txt
( [ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1 ) &
gen=$!
{ echo "== answers (defaults)"; OUT=/tmp/x1 bash $S answers 2>&1 | grep -vE "^(WARNING|ERROR)"
  echo "== results (defaults)"; mkdir -p /tmp/x1r; OUT=/tmp/x1r bash $S results 2>&1 | grep -hE "identical|errors|differ|FAIL"; } > $OUT/log1-answers.txt 2>&1
cat $OUT/log1-answers.txt
wait $gen
D=/tmp/tdturns20/bench/ssb-sf20
first() { awk 'NR==1{h=$0} NR>1 && $0==h{exit} {print}' "$1"; }
for q in q3.1 q2.1 q4.1 q4.3; do
  query=$(sed '/^--/d' benchmarks/ssb/$q.sql | tr '\n' ' ' | sed 's/;.*//')
  for e in d w w d; do
    f=/tmp/v.sql; : > $f
    echo "$query;" >> $f; echo "$query;" >> $f
    for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $query;" >> $f; done
    ( case $e in w) export TESSERA_EXP_NARROW_PAYLOADS=0;; esac; $X --format csv --data-dir $D sql $f > /tmp/v-$e.txt 2>&1 )
    echo "== $q $e: $(grep -oE 'GPU kernels: [0-9.]+ ms|rror.*' /tmp/v-$e.txt | tr '\n' ' ') answer $(first /tmp/v-$e.txt | md5sum | cut -c1-8) ($(first /tmp/v-$e.txt | wc -l) lines)"
  done
done > $OUT/log1-variants.txt 2>&1
cat $OUT/log1-variants.txt
mkdir -p /tmp/t1
OUT=/tmp/t1 SETTINGS="d w:TESSERA_EXP_NARROW_PAYLOADS=0" ROUNDS=8 bash $S turns > $OUT/log1-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log1-turns.txt | tail -20
tar -C /tmp -czf $OUT/run1-json.tgz t1
date -u
