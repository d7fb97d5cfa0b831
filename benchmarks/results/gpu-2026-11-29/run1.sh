#!/usr/bin/env bash
# Run 1 of 2026-11-29 (the pack of 46278d7, code as at 7fddd30): where a warm SSB SF 20
# query's host time goes on this machine. A TESSERA_TRACE_HOST=1 pass (15 warm runs), the
# bench's own figures (15 warm runs, untraced), then, where the device has perf, a sampled
# profile of 150 warm rounds (instruction pointers only: the packed binary is stripped;
# they are resolved here against the unstripped build of the same commit).
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
{ command -v perf; perf --version; cat /proc/sys/kernel/perf_event_paranoid; } > $OUT/log1-perf-check.txt 2>&1
cat $OUT/log1-perf-check.txt
[ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
T=benchmarks/results/gpu-2026-11-27j/trace.py
TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera 2>&1 | grep "^trace" | gzip > /tmp/log1-trace.txt.gz
{ python3 $T /tmp/log1-trace.txt.gz; python3 $T --phases /tmp/log1-trace.txt.gz; } > $OUT/log1-trace-table.txt 2>&1
grep "^sum over" $OUT/log1-trace-table.txt
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/b1.json 2>&1 | grep -E "total|q[1-4]\.[1-3]" > $OUT/log1-bench.txt
cat $OUT/log1-bench.txt | tail -3
if command -v perf > /dev/null; then
  perf record -F 20000 -o /tmp/p.data -- $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 150 --engine tessera > /tmp/perf-bench.txt 2>&1
  tail -3 /tmp/perf-bench.txt
  perf script -i /tmp/p.data -F time,tid,ip,dso 2>/dev/null | gzip > /tmp/ips.txt.gz
  ls -la /tmp/ips.txt.gz
  perf report -i /tmp/p.data --sort dso --stdio 2>/dev/null | head -30 > $OUT/log1-perf-dso.txt
  cat $OUT/log1-perf-dso.txt
fi
tar -C /tmp -czf $OUT/run1.tgz log1-trace.txt.gz b1.json $( [ -f /tmp/ips.txt.gz ] && echo ips.txt.gz )
ls -la $OUT
date -u
