#!/usr/bin/env bash
# Run 5 of 2026-11-30f (pack C: an item's row converts to its number in the tile's
# arithmetic, `int` where the kernel counts rows in `int`s; TESSERA_EXP_ITEM_ROWS=1 names
# rows by tile and item in kernels of at most 4 items a thread, =2 in every kernel whose
# items divide 32). SSB SF 1 answers under the memory limit (compact) with each against
# the CPU backend's; SSB SF 20, every query's kernels, 5 EXPLAIN ANALYZE each, in turns
# over 3 rounds: d (defaults), ir0, ir1, ir2 (compact, under '12GB'); Nsight Compute on
# q2.2's and q4.2's kernels, ir0 and ir1.
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } | tee $OUT/log5-answers.txt
( grep -q lineorder /tmp/tdturns20/bench/ssb-sf20/manifest.json 2>/dev/null || { rm -rf /tmp/tdturns20; $X --data-dir /tmp/tdturns20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1; } ) &
{ for s in ssb tpch; do
    [ -d /tmp/td${s}1/bench/$s-sf1 ] || $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera > /dev/null 2>&1
    D=/tmp/td${s}1/bench/$s-sf1; lim=600MB; [ $s = tpch ] && lim=1GB
    q=/tmp/$s-q.sql; : > $q
    for f in benchmarks/$s/q*.sql; do echo "$(sed '/^--/d' $f | tr '\n' ' ' | sed 's/;\s*$//');" >> $q; done
    [ -f /tmp/$s-cpu.out ] || $X --format csv --data-dir $D sql <(echo "SET tessera.device = 'cpu';"; cat $q) > /tmp/$s-cpu.out 2>&1
    for form in 1 2; do
      TESSERA_EXP_ITEM_ROWS=$form $X --format csv --data-dir $D sql <(echo "SET tessera.gpu_memory_limit = '$lim';"; cat $q) > /tmp/$s-ir$form.out 2>&1
      echo "== $s SF1 compact, ir$form, against the CPU backend: $(wc -l < /tmp/$s-cpu.out) lines, $(diff /tmp/$s-cpu.out /tmp/$s-ir$form.out | grep -c '^[<>]') differ"
    done
  done; } >> $OUT/log5-answers.txt 2>&1
cat $OUT/log5-answers.txt
wait
P=/tmp/tdturns20/bench/ssb-sf20
an() { f=/tmp/an.sql; : > $f; [ -n "$1" ] && echo "SET tessera.gpu_memory_limit = '$1';" >> $f
  for q in benchmarks/ssb/q*.sql; do s=$(sed '/^--/d' $q | tr '\n' ' ' | sed 's/;\s*$//'); echo "$s;" >> $f; for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
  $X --format csv --data-dir $P sql $f 2>&1 | grep -oE "GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB|rror.*"; }
for round in 1 2 3; do
  echo "== d round $round"; an ""
  for form in 0 1 2; do echo "== ir$form round $round"; TESSERA_EXP_ITEM_ROWS=$form an 12GB; done
done > $OUT/log5-variants.txt 2>&1
python3 benchmarks/results/gpu-2026-11-30f/medians.py $OUT/log5-variants.txt d ir0 ir1 ir2 > $OUT/log5-medians.txt
cat $OUT/log5-medians.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for q in q2.2 q4.2; do for f in 0 1; do
  echo "== ncu $q ir$f"
  sql="SET tessera.gpu_memory_limit = '12GB'; $(sed '/^--/d' benchmarks/ssb/$q.sql | tr '\n' ' ')"
  TESSERA_EXP_ITEM_ROWS=$f $NCU --clock-control none --kernel-name tessera_pipeline \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum \
    $X --data-dir $P sql <(echo "$sql") 2>&1 | grep -E "duration|inst_executed|registers|grid_size|block_size|warps_active|sectors"
done; done > $OUT/log5-ncu.txt 2>&1
cat $OUT/log5-ncu.txt | paste - - - - - - - | awk '{print}' | cut -c1-400
date -u
