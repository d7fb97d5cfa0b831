#!/usr/bin/env bash
# Run 7 of 2026-11-29e: run 6's pack, its GPU unit tests again (run 6 had one test's
# upload fail while the SF 20 store was generated beside them): twice as a whole, then
# the failed test alone, with its whole message.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u
for k in 1 2; do
  for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|called"; done
done > $OUT/log7-tests.txt 2>&1
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t gpu_bit_packed 2>&1 | tail -8; done >> $OUT/log7-tests.txt 2>&1
cat $OUT/log7-tests.txt
date -u
