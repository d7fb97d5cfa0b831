#!/usr/bin/env bash
# Run 4 of 2026-11-30g (pack B): SSB SF 100, every query's kernels, 3 EXPLAIN ANALYZE each
# after one plain run, under the default limit (d), under SET tessera.gpu_memory_limit =
# '64GB' (c: lineorder compact) and so with TESSERA_EXP_RUNS_DISTANCES=0 (c0: the runs'
# reference added as they are read, as before), one process each, in turns over 2 rounds;
# the 13 answers of d and c against the CPU backend's.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
R=benchmarks/results/gpu-2026-11-30g
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } > $OUT/log4-ssb100.txt
D=/tmp/td100/bench/ssb-sf100
grep -q lineorder $D/manifest.json 2>/dev/null || { rm -rf /tmp/td100; /usr/bin/time -f "gen+load %e s" $X --data-dir $D gen ssb --sf 100 --load 2>&1 | tail -2; } >> $OUT/log4-ssb100.txt 2>&1
an() { lim=$1; f=/tmp/an100.sql; : > $f; [ -n "$lim" ] && echo "SET tessera.gpu_memory_limit = '$lim';" >> $f
  for p in benchmarks/ssb/q*.sql; do q=$(basename $p .sql); s=$(sed '/^--/d' $p | tr '\n' ' ' | sed 's/;\s*$//'); echo "SELECT 'MARK $q' AS m;" >> $f; echo "$s;" >> $f; for i in 1 2 3; do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
  $X --format csv --data-dir $D sql $f 2>&1 | grep -oE "MARK q[0-9.]+|GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB|rror.*"; }
for round in 1 2; do
  echo "== d round $round"; an ""
  echo "== c round $round"; an 64GB
  echo "== c0 round $round"; TESSERA_EXP_RUNS_DISTANCES=0 an 64GB
done > $OUT/log4-variants.txt 2>&1
python3 $R/medians.py $OUT/log4-variants.txt > $OUT/log4-medians.txt
q=/tmp/ssb100.sql; : > $q
for f in benchmarks/ssb/q*.sql; do echo "$(sed '/^--/d' $f | tr '\n' ' ' | sed 's/;\s*$//');" >> $q; done
$X --format csv --data-dir $D sql <(echo "SET tessera.device = 'cpu';"; cat $q) > /tmp/100-cpu.out 2>&1
$X --format csv --data-dir $D sql $q > /tmp/100-d.out 2>&1
$X --format csv --data-dir $D sql <(echo "SET tessera.gpu_memory_limit = '64GB';"; cat $q) > /tmp/100-c.out 2>&1
for m in d c; do echo "== answers $m against the CPU backend: $(wc -l < /tmp/100-$m.out) / $(wc -l < /tmp/100-cpu.out) lines, $(diff /tmp/100-cpu.out /tmp/100-$m.out | grep -c '^[<>]') differ"; done >> $OUT/log4-ssb100.txt
cat $OUT/log4-ssb100.txt; cat $OUT/log4-medians.txt | tr '|' '\n'
date -u
