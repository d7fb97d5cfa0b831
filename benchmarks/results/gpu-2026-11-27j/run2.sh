#!/usr/bin/env bash
# Run 2 of 2026-11-27 (j), part A: run 1's binary (.base/tessera.xz, the code at run 1
# with host tracing) on SSB SF20, `bench` 5 runs, three rounds. Part B (run3.sh) follows
# on the same machine with the new binary (the work tree is limited to 64 MiB: the two
# binaries do not travel together).
X=/tmp/tessera-base
[ -x $X ] || { xz -dc .base/tessera.xz > $X && chmod +x $X; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u
[ -d /tmp/td20/bench/ssb-sf20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera > /dev/null 2>&1
{
for r in 1 2 3; do
  echo "== round $r, run 1's binary"
  $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 5 --engine tessera 2>&1 | grep -E "^│ (q|total)"
done
} > $OUT/log2-bench-base.txt 2>&1
ls -la $OUT
