#!/usr/bin/env bash
# Run 9 of 2026-11-30e (the review's pack, commit 60a6c86: a lane's runs directory word
# found through tessera_runs_dirs): GPU unit tests; SSB SF 1 answers on the GPU under a
# memory limit (compact: the q1.x probes hold their directory words a lane) against the
# CPU backend's.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } > $OUT/log9-tests.txt
for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^  left|^ right"; done >> $OUT/log9-tests.txt 2>&1
D=/tmp/tdssb1/bench/ssb-sf1
[ -d $D ] || $X --data-dir /tmp/tdssb1 bench ssb --sf 1 --runs 1 --engine tessera > /dev/null 2>&1
q=/tmp/ssb-q.sql; : > $q
for f in benchmarks/ssb/q*.sql; do echo "$(sed '/^--/d' $f | tr '\n' ' ' | sed 's/;\s*$//');" >> $q; done
$X --format csv --data-dir $D sql <(echo "SET tessera.device = 'cpu';"; cat $q) > /tmp/ssb-cpu.out 2>&1
$X --format csv --data-dir $D sql <(echo "SET tessera.gpu_memory_limit = '600MB';"; cat $q) > /tmp/ssb-lim.out 2>&1
echo "== ssb SF1 lim against the CPU backend: $(wc -l < /tmp/ssb-cpu.out) lines, $(diff /tmp/ssb-cpu.out /tmp/ssb-lim.out | grep -c '^[<>]') differ" >> $OUT/log9-tests.txt
cat $OUT/log9-tests.txt
date -u
