#!/usr/bin/env bash
# The first call of run 6 (2026-11-29b), as run5-prep.sh: the binary of 0f1942e to the
# machine's /tmp, and the SSB SF 20 store that gpu-suite.sh's `turns` reads generated with it.
xz -dc .gpu/old-tessera.xz > /tmp/old-tessera && chmod +x /tmp/old-tessera
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u
[ -d /tmp/tdturns20 ] || /tmp/old-tessera --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 2>&1 | tail -2
ls -la /tmp/old-tessera; date -u
