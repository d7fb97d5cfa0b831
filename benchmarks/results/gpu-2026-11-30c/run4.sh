#!/usr/bin/env bash
# Run 4 of 2026-11-30c (run 3's last step again: its query text was lost to a loop
# variable): SSB q3.1's kernels at SF 20 under the code generator's and executor's
# experiment switches, new binary, median of 7 EXPLAIN ANALYZE, 2 rounds.
X=/tmp/tessera-gpu/bin/tessera
P=/tmp/tdturns20/bench/ssb-sf20
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
q="$(sed '/^--/d' benchmarks/ssb/q3.1.sql | tr '\n' ' ' | sed 's/;\s*$//')"
f=/tmp/q31x.sql; : > $f; echo "$q;" >> $f; echo "$q;" >> $f; for i in 1 2 3 4 5 6 7; do echo "EXPLAIN ANALYZE $q;" >> $f; done
{ for round in 1 2; do
    for v in NONE TESSERA_EXP_CARRY=1 TESSERA_EXP_GLOBAL_COPIES=16 TESSERA_EXP_GLOBAL_COPIES=4 TESSERA_EXP_EAGER_SECTORS=0.15 TESSERA_EXP_PREFETCH=0 TESSERA_EXP_WARP_SKIP=0 TESSERA_EXP_EARLY_PROBES=0 TESSERA_EXP_COLUMN_LOADS=1 TESSERA_EXP_COLUMN_LOADS=2 TESSERA_EXP_COLUMN_LOADS=3 TESSERA_EXP_NARROW_PAYLOADS=32 TESSERA_EXP_PRESENCE=0 TESSERA_EXP_WIDE_BLOCKS=0 TESSERA_EXP_KERNEL_GRAPH=1; do
      t=$( ( [ $v = NONE ] || export $v; $X --format csv --data-dir $P sql $f 2>&1 | grep -oE "GPU kernels: [0-9.]+ ms" | grep -oE "[0-9.]+" | sort -n | sed -n 4p ) )
      echo "q3.1 $v round $round: kernels median $t ms"
    done
  done; } > $OUT/log4-q31exp.txt 2>&1
cat $OUT/log4-q31exp.txt
