#!/usr/bin/env bash
# Run 7 of 2026-11-30c: the probe study (`tessera bench probes`) with a fourth placement:
# every bitmap in global memory and each row's three words loaded a tile ahead of its
# tests (keys two tiles ahead), against the three of 2026-11-30b (global, customer's in
# shared memory, all in shared), blocks of 128/512/1024 threads, SSB SF 20's row count;
# every answer checked against the host's. GPU unit tests of tessera-cuda first; then
# Nsight Compute on the global and ahead probes (every 12th launch: one a variant).
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log7-tests.txt
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped"; done >> $OUT/log7-tests.txt 2>&1
cat $OUT/log7-tests.txt
for r in 1 2; do
  echo "== round $r"
  $X bench probes --json $OUT/probes-sf20-round$r.json 2>&1
done > $OUT/log7-probes.txt
cat $OUT/log7-probes.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
$NCU --clock-control none --kernel-name regex:"tessera_ps_probe_(global|ahead)" --csv \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum,launch__registers_per_thread,launch__block_size,lts__t_requests_srcunit_tex.sum \
  $X bench probes 2>/dev/null | python3 -c "
import csv, sys
rows = [r for r in csv.reader(sys.stdin) if len(r) > 10]
h = rows[0]; ki = h.index('Kernel Name'); ii = h.index('ID'); ni = h.index('Metric Name'); vi = h.index('Metric Value')
per = {}
for r in rows[1:]: per.setdefault((int(r[ii]), r[ki]), {})[r[ni]] = r[vi]
for n, ((i, k), m) in enumerate(sorted(per.items())):
    if n % 11 == 5: print(k, ' '.join(f'{a}={v}' for a, v in sorted(m.items())))
" > $OUT/log7-ncu.txt 2>&1
cat $OUT/log7-ncu.txt
date -u
