#!/usr/bin/env bash
# Run 4 of 2026-11-30h (pack A): where SSB SF 20's star-join probes spend their
# instructions, byte-narrowed (d) and compact ('always', c): Nsight Compute's source
# counters (executed instructions and stall samples a SASS instruction) of q3.2's and
# q4.2's probes, exported per instruction as CSV (q3.2 c: 2026-11-30g run 2).
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
P=/tmp/td20/bench/ssb-sf20
grep -q lineorder $P/manifest.json 2>/dev/null || { rm -rf /tmp/td20; $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1; }
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
$NCU --version > $OUT/log4-ncu.txt 2>&1
for v in q3.2-d q4.2-d q4.2-c; do
  q=${v%-*}; f=${v##*-}; set=""; [ $f = c ] && set="SET tessera.gpu_compact_tables = 'always';"
  echo "== $v" >> $OUT/log4-ncu.txt
  # The probe is the query's last tessera_pipeline launch.
  n=$($NCU --clock-control none --kernel-name tessera_pipeline --metrics gpu__time_duration.sum $X --data-dir $P sql <(echo "$set $(sed '/^--/d' benchmarks/ssb/$q.sql | tr '\n' ' ')") 2>&1 | grep -c "tessera_pipeline (")
  $NCU --clock-control none --kernel-name tessera_pipeline --launch-skip $((n - 1)) --launch-count 1 --section SourceCounters --section InstructionStats --section LaunchStats --section Occupancy --section WarpStateStats -o $OUT/$v \
    $X --data-dir $P sql <(echo "$set $(sed '/^--/d' benchmarks/ssb/$q.sql | tr '\n' ' ')") >> $OUT/log4-ncu.txt 2>&1
  $NCU -i $OUT/$v.ncu-rep --page source --print-source sass --csv > $OUT/$v-sass.csv 2>> $OUT/log4-ncu.txt
  $NCU -i $OUT/$v.ncu-rep --page details >> $OUT/log4-ncu.txt 2>&1
  rm -f $OUT/$v.ncu-rep; gzip -9 $OUT/$v-sass.csv
done
ls -la $OUT; grep -E "==|Executed Ipc|Issue Slots Busy|Registers Per|Achieved Occupancy|Executed Instructions  |Block Size|Duration" $OUT/log4-ncu.txt
date -u
