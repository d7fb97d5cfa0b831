#!/usr/bin/env bash
# Run 2 of 2026-12-01f (the pack of run 1). Nsight Compute's durations of every kernel of
# each SSB SF 20 query with the defaults (a process running it once and one running it
# four times, caches not flushed, clocks not locked: the warm runs' kernels, ncu_sums.py);
# then SSB SF 100 with the defaults (now compact), 3 warm runs of `tessera bench`.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log2-ncu.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
P=/tmp/tdv-ssb20
grep -q lineorder $P/manifest.json 2>/dev/null || { rm -rf $P; $X --data-dir $P gen ssb --sf 20 --load > /dev/null 2>&1; }
for p in benchmarks/ssb/q*.sql; do
  q=$(basename $p .sql); s="$(sed '/^--/d' $p | tr '\n' ' ' | sed 's/;\s*$//')"
  for n in 1 4; do
    f=/tmp/ncu-$q-$n.sql; : > $f; for i in $(seq $n); do echo "$s;" >> $f; done
    echo "== $q $n"
    $NCU --cache-control none --clock-control none --metrics gpu__time_duration.sum $X --data-dir $P sql $f 2>&1 | grep -E "^\s+tessera_[a-z_0-9]+.*\(|gpu__time_duration"
  done
done > $OUT/ncu-ssb20-durations.txt
python3 benchmarks/results/gpu-2026-12-01f/ncu_sums.py $OUT/ncu-ssb20-durations.txt | tee -a $OUT/log2-ncu.txt
gzip $OUT/ncu-ssb20-durations.txt
rm -rf $P
mkdir -p /tmp/td100/bench
grep -q lineorder /tmp/tdv-ssb100/manifest.json 2>/dev/null && [ ! -e /tmp/td100/bench/ssb-sf100 ] && ln -s /tmp/tdv-ssb100 /tmp/td100/bench/ssb-sf100
$X --data-dir /tmp/td100 bench ssb --sf 100 --runs 3 --engine tessera --json $OUT/ssb100-run2.json > $OUT/log2-ssb100.txt 2>&1
cat $OUT/log2-ssb100.txt | tail -25
date -u
