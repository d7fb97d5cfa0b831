#!/usr/bin/env bash
# Run 5 of 2026-11-29f: run 4's pack (the final code). SSB SF 20 with the defaults (d:
# 64-bit payloads narrowed, which SSB has none of) against every payload narrowed (n32),
# 15 warm runs x 8 rounds in turns.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
mkdir -p /tmp/t5
OUT=/tmp/t5 SETTINGS="d n32:TESSERA_EXP_NARROW_PAYLOADS=32" ROUNDS=8 bash $S turns > $OUT/log5-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log5-turns.txt | tail -20
tar -C /tmp -czf $OUT/run5-json.tgz t5
date -u
