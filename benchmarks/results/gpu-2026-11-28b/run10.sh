#!/usr/bin/env bash
# Run 10 of 2026-11-28b: run 9's SF1 answer check again (run 9 called the binary before
# the suite script had unpacked it on the fresh machine, so it checked nothing): SSB SF1
# and TPC-H SF1 answers checked with the defaults at the final code (pack of 511135f).
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{
echo "== SF1 answers checked, defaults (lines without a check mark only)"
for s in ssb tpch; do $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done
} > $OUT/log10-sf1.txt 2>&1
cat $OUT/log10-sf1.txt
