#!/usr/bin/env bash
# Run 5 of 2026-11-29b: the code before this session (o: tessera built at 0f1942e,
# carried as .gpu/old-tessera.xz) against the pack of 4d14b7d + the bench's rows rendered
# once (d; the two binaries do not fit one device call's carry: the first call took
# the old one to the machine's /tmp and generated the data, `run5-prep.sh`), SSB SF 20 alone, each in its own process, 15 warm runs, $ROUNDS (default 24)
# rounds in turns (the first setting alternating), pooled per setting by
# gpu-2026-11-27j/ab_json.py; then `tessera difftest` of d to its end, every line kept
# (MISMATCH lines and the summary grepped out).
X=/tmp/tessera-gpu/bin/tessera
O=/tmp/old-tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
[ -x $O ] || { xz -dc .gpu/old-tessera.xz > $O && chmod +x $O; }
ls -la $O
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
[ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
mkdir -p /tmp/ab5
for r in $(seq 1 ${ROUNDS:-24}); do
  order="d o"; [ $((r % 2)) = 0 ] && order="o d"
  for e in $order; do
    B=$X; [ $e = o ] && B=$O
    echo "== ssb20 $e round $r: $($B --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/ab5/ab-ssb20-r$r-e$e.json 2>&1 | grep -E '^│ total')"
  done
done > $OUT/log5-ab.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/ab5 ab-ssb20 >> $OUT/log5-ab.txt 2>&1
tail -18 $OUT/log5-ab.txt
tar -C /tmp -czf $OUT/run5-json.tgz ab5
date -u
timeout 360 $X --data-dir /tmp/tdr difftest --require-gpu > /tmp/difftest5.txt 2>&1; echo "difftest exit $?" >> /tmp/difftest5.txt
{ grep -c "^MISMATCH" /tmp/difftest5.txt; grep -E "^case |mismatches|difftest exit|problem" /tmp/difftest5.txt; } > $OUT/log5-difftest.txt
cat $OUT/log5-difftest.txt | tail -8
gzip -c /tmp/difftest5.txt > $OUT/run5-difftest.txt.gz
date -u
