#!/usr/bin/env bash
# Run 3 of 2026-11-30d: SSB SF 100, the 13 queries and EXPLAIN ANALYZE of q4.3 in one
# process, under the default memory limit (d) and under SET tessera.gpu_memory_limit =
# '64GB' (lim: lineorder, about 43 GB plain, is over half of it and goes up compact):
# GPU column cache, kernels, answers compared with the CPU backend's.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { rm -rf /tmp/tessera-gpu; mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } > $OUT/log3-ssb100.txt
{
D=/tmp/td100/bench/ssb-sf100
grep -q lineorder $D/manifest.json 2>/dev/null || { rm -rf /tmp/td100; /usr/bin/time -f "gen+load %e s" $X --data-dir $D gen ssb --sf 100 --load 2>&1 | tail -2; }
q=/tmp/ssb100.sql; : > $q
for f in benchmarks/ssb/q*.sql; do echo "$(sed '/^--/d' $f | tr '\n' ' ' | sed 's/;\s*$//');" >> $q; done
e="EXPLAIN ANALYZE $(tail -1 $q)"
{ cat $q; echo "SELECT 'explain follows' AS marker;"; echo "$e"; } > /tmp/100-d.sql
{ echo "SET tessera.gpu_memory_limit = '64GB';"; cat $q; echo "SELECT 'explain follows' AS marker;"; echo "$e"; } > /tmp/100-lim.sql
{ echo "SET tessera.device = 'cpu';"; cat $q; } > /tmp/100-cpu.sql
for m in d lim cpu; do
  s0=$(date +%s.%N); $X --format csv --data-dir $D sql /tmp/100-$m.sql > /tmp/100-$m.all 2> /tmp/100-$m.err
  echo "== $m: $(python3 -c "import time; print(round(time.time() - $s0, 1))") s; $(cat /tmp/100-$m.all /tmp/100-$m.err | grep -oE "GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB in [0-9]+ columns|rror.*" | paste -sd' ')"
done
for m in d lim; do sed '/^marker$/,$d' /tmp/100-$m.all > /tmp/100-$m.out; done
cp /tmp/100-cpu.all /tmp/100-cpu.out
for m in d lim; do echo "== answers $m against the CPU backend: $(wc -l < /tmp/100-$m.out) / $(wc -l < /tmp/100-cpu.out) lines, $(diff /tmp/100-cpu.out /tmp/100-$m.out | grep -c '^[<>]') differ"; done
diff /tmp/100-cpu.out /tmp/100-lim.out | head -10
} >> $OUT/log3-ssb100.txt 2>&1
cat $OUT/log3-ssb100.txt
date -u
