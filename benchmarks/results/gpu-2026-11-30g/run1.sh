#!/usr/bin/env bash
# Run 1 of 2026-11-30g (the committed code, 71a27a9): do SSB's lean q1.x probes over
# compact columns gain from more resident warps? Their kernels hold 64-72 registers a
# thread (8 blocks of 128 an SM, a quarter to a half of its warps) and issue on 64% of
# cycles. SSB SF 20 under '12GB' (lineorder compact), q1.1-q1.3, 5 EXPLAIN ANALYZE a query,
# 3 rounds in turns: c (as committed), mb10/mb12 (TESSERA_EXP_MIN_BLOCKS: at least 10/12
# blocks an SM asked of NVRTC), li4 (4 items a thread, TESSERA_EXP_LEAN_ITEMS), li4mb16,
# li16; d (the defaults, byte-narrowed) and d-mb12 beside them. Then Nsight Compute of
# q1.1 for c, mb12 and li4 (registers, spills, instructions).
X=/tmp/tessera-gpu/bin/tessera
rm -rf /tmp/tessera-gpu; { mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf -; }
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; done
R=benchmarks/results/gpu-2026-11-30g
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } > $OUT/log1-env.txt
P=/tmp/td20/bench/ssb-sf20
grep -q lineorder $P/manifest.json 2>/dev/null || { rm -rf /tmp/td20; /usr/bin/time -f "gen+load %e s" $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera --queries q1.1 > /dev/null 2>> $OUT/log1-env.txt; }
an() { lim=$1; shift; f=/tmp/an.sql; : > $f; [ -n "$lim" ] && echo "SET tessera.gpu_memory_limit = '$lim';" >> $f
  for q in "$@"; do s=$(sed '/^--/d' benchmarks/ssb/$q.sql | tr '\n' ' ' | sed 's/;\s*$//'); echo "SELECT 'MARK $q' AS m;" >> $f; echo "$s;" >> $f; for i in 1 2 3 4 5; do echo "EXPLAIN ANALYZE $s;" >> $f; done; done
  $X --format csv --data-dir $P sql $f 2>&1 | grep -oE "MARK q[0-9.]+|GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB|rror.*|arning.*"; }
Q1="q1.1 q1.2 q1.3"
for round in 1 2 3; do
  echo "== d round $round"; an "" $Q1
  echo "== c round $round"; an 12GB $Q1
  echo "== mb10 round $round"; TESSERA_EXP_MIN_BLOCKS=10 an 12GB $Q1
  echo "== mb12 round $round"; TESSERA_EXP_MIN_BLOCKS=12 an 12GB $Q1
  echo "== li4 round $round"; TESSERA_EXP_LEAN_ITEMS=4 an 12GB $Q1
  echo "== li4mb16 round $round"; TESSERA_EXP_LEAN_ITEMS=4 TESSERA_EXP_MIN_BLOCKS=16 an 12GB $Q1
  echo "== li16 round $round"; TESSERA_EXP_LEAN_ITEMS=16 an 12GB $Q1
  echo "== d-mb12 round $round"; TESSERA_EXP_MIN_BLOCKS=12 an "" $Q1
done > $OUT/log1-variants.txt 2>&1
python3 $R/medians.py $OUT/log1-variants.txt > $OUT/log1-medians.txt
cat $OUT/log1-env.txt $OUT/log1-medians.txt | tr '|' '\n'
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for v in c mb12 li4; do
  echo "== ncu q1.1 $v"; e=""; case $v in mb12) e="TESSERA_EXP_MIN_BLOCKS=12";; li4) e="TESSERA_EXP_LEAN_ITEMS=4";; esac
  sql="SET tessera.gpu_memory_limit = '12GB'; $(sed '/^--/d' benchmarks/ssb/q1.1.sql | tr '\n' ' ')"
  env $e $NCU --clock-control none --kernel-name tessera_pipeline \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum \
    $X --data-dir $P sql <(echo "$sql") 2>&1 | grep -vE "^==PROF==|^\s*$|^│|^┌|^└|^╞|^├|^\s*-+\s|Warning: Data"
done > $OUT/log1-ncu.txt 2>&1
grep -E "==|duration|registers|inst_executed|local|warps_active|issue_active|grid_size" $OUT/log1-ncu.txt | head -80
date -u
