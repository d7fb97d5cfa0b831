#!/usr/bin/env bash
# Run 5 of 2026-11-28i (eac97e3's pack, as run 4): eight random-query runs of 120 s at once
# with the defaults (large direct tables at most 8 KiB), seeds 2121-2128 past the default.
mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -
X=/tmp/tessera-gpu/bin/tessera
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
for s in $(seq 1 8); do timeout 120 $X --data-dir /tmp/tdr$s difftest --require-gpu --seed $((0x7e55e7a02026 + 2120 + s)) > /tmp/difftest-$s.txt 2>&1 & done; wait
{
echo "== difftest, seeds 2121-2128 past the default, 120 s each"
grep -hE "mismatch|MISMATCH|differ|panick" /tmp/difftest-*.txt | grep -v " 0 mismatches" | head -20
cat /tmp/difftest-*.txt | grep -E "^case " | awk '{for (i=1;i<NF;i++) if ($(i+1) ~ /^queries,?$/) q+=$i} END {print q " queries in finished cases"}'
} > $OUT/log5-difftests.txt 2>&1
cat $OUT/log5-difftests.txt
tar -C /tmp -czf $OUT/run5-difftests.tgz $(cd /tmp && ls difftest-*.txt)
date -u
