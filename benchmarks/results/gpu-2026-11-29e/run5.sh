#!/usr/bin/env bash
# Run 5 of 2026-11-29e: run 4's pack, `tessera difftest` to its end (random queries: GPU
# against the CPU backend and DataFusion) with 8 copies of every global group table that
# can take them (TESSERA_EXP_GLOBAL_COPIES=8), and with them the seen flags set by the
# fold where an accumulator shows the groups present (the default).
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u
TESSERA_EXP_GLOBAL_COPIES=8 timeout 480 $X --data-dir /tmp/tdr difftest --require-gpu > /tmp/difftest.txt 2>&1; echo "difftest exit $?" >> /tmp/difftest.txt
{ echo "== mismatch lines: $(grep -c '^MISMATCH' /tmp/difftest.txt)"; grep '^MISMATCH' /tmp/difftest.txt | head; tail -14 /tmp/difftest.txt; } > $OUT/log5-difftest.txt
cat $OUT/log5-difftest.txt
gzip -c /tmp/difftest.txt > $OUT/run5-difftest.txt.gz
date -u
