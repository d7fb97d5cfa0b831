#!/usr/bin/env bash
# Run 6 of 2026-11-29g: run 4's pack. Whether bit-packed columns would rather be loaded
# where first used: SSB SF 20 with the defaults (d), TESSERA_EXP_NARROW_BITS=8 (b8), and
# =8 with columns loaded up front only from a 0.35 share of their sectors (b8e:
# TESSERA_EXP_EAGER_SECTORS=0.35; 0.25 by default), 15 warm runs x 3 rounds in turns.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
mkdir -p /tmp/t6
OUT=/tmp/t6 SETTINGS="d b8:TESSERA_EXP_NARROW_BITS=8 b8e:TESSERA_EXP_NARROW_BITS=8,TESSERA_EXP_EAGER_SECTORS=0.35" ROUNDS=3 bash $S turns > $OUT/log6-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log6-turns.txt | tail -20
tar -C /tmp -czf $OUT/run6-json.tgz t6
date -u
