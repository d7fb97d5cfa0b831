#!/usr/bin/env bash
# Run 6 of 2026-11-30c: SSB q3.1 at SF 20 timed three ways, one binary (n, as run 5):
# the bench's CUDA-event kernel figure (15 warm runs, twice); Nsight Compute durations of
# every kernel of four runs in one process without flushing caches between kernels
# (--cache-control none, --clock-control none); and EXPLAIN ANALYZE's phases (host
# timestamps of each pipeline's start event and launch).
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log6-q31.txt
grep -q lineorder /tmp/tdturns20/bench/ssb-sf20/manifest.json 2>/dev/null || { rm -rf /tmp/tdturns20; $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1; }
P=/tmp/tdturns20/bench/ssb-sf20
for i in 1 2; do $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 15 --engine tessera --queries q3.1 --json $OUT/q31-bench-$i.json 2>&1 | grep -E "^│ q3.1"; done >> $OUT/log6-q31.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
q="$(sed '/^--/d' benchmarks/ssb/q3.1.sql | tr '\n' ' ' | sed 's/;\s*$//')"
f=/tmp/q31x4.sql; : > $f; for i in 1 2 3 4; do echo "$q;" >> $f; done
echo "== ncu, every kernel of 4 runs, caches not flushed" >> $OUT/log6-q31.txt
$NCU --cache-control none --clock-control none --metrics gpu__time_duration.sum $X --data-dir $P sql $f 2>&1 | grep -E "^\s+(tessera_[a-z_]+)|gpu__time_duration" | sed -E 's/\(.*//' | paste - - | awk '{print $1, $NF}' >> $OUT/log6-q31.txt
f=/tmp/q31e.sql; : > $f; echo "$q;" >> $f; echo "$q;" >> $f; for i in 1 2 3; do echo "EXPLAIN ANALYZE $q;" >> $f; done
$X --data-dir $P sql $f > $OUT/log6-explain.txt 2>&1
cat $OUT/log6-q31.txt
grep -E "kernel|event|launched|queued|GPU kernels" $OUT/log6-explain.txt | tail -30
date -u
