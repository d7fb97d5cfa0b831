#!/usr/bin/env bash
# Run 6 of 2026-11-29c (run 4's pack, a fresh machine): SSB SF 20 with the defaults (d)
# against the early launch and the listed chain both off (x), 15 warm runs x 14 rounds in
# turns.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
mkdir -p /tmp/t6
OUT=/tmp/t6 SETTINGS="d x:TESSERA_EXP_LISTED_CHAIN=0,TESSERA_EXP_EARLY_LAUNCH=0" ROUNDS=14 bash benchmarks/device/gpu-suite.sh turns > $OUT/log6-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log6-turns.txt | tail -20
tar -C /tmp -czf $OUT/run6-json.tgz t6
date -u
