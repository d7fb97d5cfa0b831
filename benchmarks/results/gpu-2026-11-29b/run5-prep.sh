#!/usr/bin/env bash
# The first call of run 5 (2026-11-29b): the binary of 0f1942e to the machine's /tmp, and
# SSB SF 20 generated with it (the store format is the same), for run5.sh's next call.
xz -dc .gpu/old-tessera.xz > /tmp/old-tessera && chmod +x /tmp/old-tessera
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u
[ -d /tmp/td20 ] || /tmp/old-tessera --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 2>&1 | tail -2
ls -la /tmp/old-tessera /tmp/td20; date -u
