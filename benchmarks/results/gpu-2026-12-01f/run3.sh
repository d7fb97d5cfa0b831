#!/usr/bin/env bash
# Run 3 of 2026-12-01f (the pack of runs 1-2): SSB SF 100's first query in a new process
# (q1.1, then q3.1; kernel disk cache warm), with the defaults (lineorder compact) and
# under tessera.gpu_compact_tables = 'never' (byte-narrowed), alternating, twice each.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } > $OUT/log3-first.txt
ST=/tmp/tdv-ssb100
grep -q lineorder $ST/manifest.json 2>/dev/null || { rm -rf $ST; /usr/bin/time -f "gen --load %e s" $X --data-dir $ST gen ssb --sf 100 --load > /dev/null 2>> $OUT/log3-first.txt; }
q11="$(sed '/^--/d' benchmarks/ssb/q1.1.sql | tr '\n' ' ' | sed 's/;\s*$//')"
q31="$(sed '/^--/d' benchmarks/ssb/q3.1.sql | tr '\n' ' ' | sed 's/;\s*$//')"
# Warm the kernel disk cache for both forms first.
$X --data-dir $ST sql <(echo "$q11;"; echo "$q31;") > /dev/null 2>&1
$X --data-dir $ST sql <(echo "SET tessera.gpu_compact_tables = 'never';"; echo "$q11;"; echo "$q31;") > /dev/null 2>&1
for r in 1 2; do
  for m in auto never; do
    for q in q11 q31; do
      /usr/bin/time -f "$m $q round $r: process %e s" $X --data-dir $ST sql <(echo "SET tessera.gpu_compact_tables = '$m';"; echo "${!q};") > /dev/null 2>> $OUT/log3-first.txt
    done
  done
done
cat $OUT/log3-first.txt; date -u
