#!/usr/bin/env bash
# Run 6 of 2026-11-30: the device's NVRTC and its ptxas log for q4.2's bit-packed probe
# (run 4's kernel, now crates/tessera-cuda/tests/kernels/), with no register cap and with --maxrregcount=40 and 255.
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
R=benchmarks/results/gpu-2026-11-30
lib=$(for d in ${LD_LIBRARY_PATH//:/ }; do ls $d/libnvrtc.so* 2>/dev/null; done | head -1)
ls -la /usr/local/ | grep -i cuda
for o in "" --maxrregcount=40 --maxrregcount=255; do
  echo "== options: ${o:-none}"
  python3 $R/ptxas_log.py $lib crates/tessera-cuda/cuda crates/tessera-cuda/tests/kernels/ssb-q4.2-sf20-probe-bits8.cu $o
done 2>&1 | tee $OUT/log6-nvrtc.txt
