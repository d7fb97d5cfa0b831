#!/usr/bin/env bash
# Run 3 of 2026-11-28f, run 2's pack, teardown thread off (TESSERA_EXP_TEARDOWN=0, it was
# slower in run 2): does mimalloc's purging of freed memory (madvise, page faults, TLB
# shootdowns) cost the host path? SSB SF20, 15 warm runs x 8 rounds in turns: as is (d),
# MIMALLOC_PURGE_DELAY=-1 (p: freed memory kept). Per process: page faults and context
# switches (getrusage) with 15 and with 45 warm runs. Then q3.1's kernels dumped (the
# store's kernel cache moved aside so they compile).
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
export TESSERA_EXP_TEARDOWN=0
[ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
rm -rf /tmp/r3; mkdir -p /tmp/r3
{
for r in $(seq 1 8); do
  order="d p"; [ $((r % 2)) = 0 ] && order="p d"
  for e in $order; do
    env=""; [ $e = p ] && env="MIMALLOC_PURGE_DELAY=-1"
    echo "== SSB SF20, round $r, setting $e"
    env $env $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r3/run3-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log3-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r3 run3-ssb20 > $OUT/log3-ssb-ab.txt 2>&1
cat $OUT/log3-ssb-ab.txt
{
for e in d p; do for n in 15 45; do
  env=""; [ $e = p ] && env="MIMALLOC_PURGE_DELAY=-1"
  python3 - "$env" $n <<'PY'
import resource, subprocess, sys, os
env = dict(os.environ)
if sys.argv[1]: k, v = sys.argv[1].split("="); env[k] = v
subprocess.run(["/tmp/tessera-gpu/bin/tessera", "--data-dir", "/tmp/td20", "bench", "ssb", "--sf", "20", "--runs", sys.argv[2], "--engine", "tessera"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"setting {sys.argv[1] or 'default'} runs {sys.argv[2]}: minor faults {r.ru_minflt}, major {r.ru_majflt}, voluntary switches {r.ru_nvcsw}, involuntary {r.ru_nivcsw}, user {r.ru_utime:.2f} s, system {r.ru_stime:.2f} s")
PY
done; done
} > $OUT/log3-rusage.txt 2>&1
cat $OUT/log3-rusage.txt
mv /tmp/td20/kernels /tmp/td20-kernels
mkdir -p /tmp/kd
TESSERA_DUMP_KERNELS=/tmp/kd $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q3.1 > /dev/null 2>&1
rm -rf /tmp/td20/kernels; mv /tmp/td20-kernels /tmp/td20/kernels
ls -la /tmp/kd
tar -C /tmp -czf $OUT/run3-json-kernels.tgz r3 kd
date -u
