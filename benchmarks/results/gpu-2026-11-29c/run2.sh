#!/usr/bin/env bash
# Run 2 of 2026-11-29c (run 1's pack, a fresh machine): `tessera difftest` to its end
# (random queries, GPU against the CPU backend and DataFusion) with the early launch on,
# SSB SF 20 generated beside it; then SSB SF 20 early (d) against not (x:
# TESSERA_EXP_EARLY_LAUNCH=0), 15 warm runs x 16 rounds in turns.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
( [ -d /tmp/tdturns20 ] || $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1 ) &
gen=$!
timeout 380 $X --data-dir /tmp/tdr difftest --require-gpu > /tmp/difftest.txt 2>&1; echo "difftest exit $?" >> /tmp/difftest.txt
{ echo "== mismatch lines: $(grep -c '^MISMATCH' /tmp/difftest.txt)"; grep '^MISMATCH' /tmp/difftest.txt | head; tail -14 /tmp/difftest.txt; } > $OUT/log2-difftest.txt
cat $OUT/log2-difftest.txt
gzip -c /tmp/difftest.txt > $OUT/run2-difftest.txt.gz
wait $gen
mkdir -p /tmp/t2
OUT=/tmp/t2 SETTINGS="d x:TESSERA_EXP_EARLY_LAUNCH=0" ROUNDS=16 bash $S turns > $OUT/log2-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log2-turns.txt | tail -20
tar -C /tmp -czf $OUT/run2-json.tgz t2
date -u
