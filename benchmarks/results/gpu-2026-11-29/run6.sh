#!/usr/bin/env bash
# Run 6 of 2026-11-29 (the pack of 14e5d2f, graph off as the final default): does the
# host's CPU placement move SSB SF 20's wall? Run 5's traces showed the same host steps
# 2x slower for a few queries at a time, a different few in each process. The machine's
# topology, then SSB SF 20 (15 warm runs) unpinned (u) and pinned with taskset to the
# cores local to the GPU (l) and to the other ones (r), 4 rounds in turns.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
export TESSERA_EXP_KERNEL_GRAPH=0
{ nvidia-smi --query-gpu=name,memory.total,driver_version,pci.bus_id --format=csv,noheader; nvidia-smi topo -m; lscpu | grep -iE "model name|numa|socket|thread|core|MHz"
  B=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1 | tr 'A-F' 'a-f' | sed 's/^0000//; s/^/0000/')
  for f in /sys/bus/pci/devices/*; do case "${f,,}" in *"${B: -7}"*) echo "$f local_cpulist $(cat $f/local_cpulist) numa $(cat $f/numa_node)";; esac; done
  cat /sys/fs/cgroup/cpuset.cpus.effective 2>/dev/null; nproc; taskset -pc $$; } > $OUT/log6-topology.txt 2>&1
cat $OUT/log6-topology.txt
LOCAL=$(grep -oE "local_cpulist [0-9,-]+" $OUT/log6-topology.txt | head -1 | awk '{print $2}')
ALL=$(taskset -pc $$ | awk -F': ' '{print $2}')
echo "local: $LOCAL all: $ALL"
[ -d /tmp/td20 ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
mkdir -p /tmp/ab6
for r in 1 2 3 4; do
  order="u l"; [ $((r % 2)) = 0 ] && order="l u"
  for e in $order; do
    case $e in u) P="";; l) P="taskset -c $LOCAL";; esac
    echo "== ssb20 $e round $r: $($P $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/ab6/ab-ssb20-r$r-e$e.json 2>&1 | grep -E '^│ total')"
  done
done > $OUT/log6-ab.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/ab6 ab-ssb20 >> $OUT/log6-ab.txt 2>&1
cat $OUT/log6-ab.txt
tar -C /tmp -czf $OUT/run6-json.tgz ab6
date -u
