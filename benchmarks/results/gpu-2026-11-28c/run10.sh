#!/usr/bin/env bash
# Run 10 of 2026-11-28c, run 9's pack (2388946; the executor as at b1a8059): a third
# machine's A/B of the default (builds' sinks preset, TESSERA_EXP_QUERY_FILL=2) against
# none (0), as run 6: SSB SF20 `bench`, 15 warm runs x 8 rounds in turns, each in its own
# process.
X=/tmp/tessera-gpu/bin/tessera
[ -x $X ] || { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
mkdir -p /tmp/r10
$X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
{
for r in 1 2 3 4 5 6 7 8; do
  order="2 0"; [ $((r % 2)) = 0 ] && order="0 2"
  for e in $order; do
    echo "== SSB SF20, round $r, QUERY_FILL=$e"
    TESSERA_EXP_QUERY_FILL=$e $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 15 --engine tessera --json /tmp/r10/run10-ssb20-r$r-e$e.json 2>&1 | grep -E "^│ total"
  done
done
} > $OUT/log10-ssb-bench.txt 2>&1
python3 benchmarks/results/gpu-2026-11-27j/ab_json.py /tmp/r10 run10-ssb20 > $OUT/log10-ssb-ab.txt 2>&1
cat $OUT/log10-ssb-ab.txt
tar -C /tmp/r10 -czf $OUT/run10-json.tgz .
