#!/usr/bin/env bash
# One device run (≤ 10 min on an H200) for the CUDA backend's figures: SSB SF1 (answers
# checked), `tessera difftest` (random queries, GPU vs CPU vs DataFusion), SSB SF20 Tessera beside DuckDB (JSON + SVG, GPU kernels beside the bandwidth
# model), EXPLAIN ANALYZE of every SSB query with literals inlined and as kernel
# parameters, the cost of a new constant in each literal mode, cold first-query numbers
# (new process; kernel disk cache warm and empty), TPC-H SF1 Tessera beside DuckDB.
#
# Prepare here, from the project root (both folders are kept out of git):
#   cargo build --release -p tessera-cli
#   mkdir -p .devbin && strip -o /tmp/t target/release/tessera && xz -T2 -3 -c /tmp/t > .devbin/tessera.xz
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d .whl duckdb==1.5.5
# Then run on the device with carry [".devbin", ".whl"]:
#   bash benchmarks/device/gpu-suite.sh > $OUT/log.txt 2>&1
set -u
X=/tmp/tessera
xz -dc .devbin/tessera.xz > $X && chmod +x $X
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
nproc; date -u
Q=benchmarks/ssb
echo "== SSB SF1 (answers checked)"
$X --data-dir /tmp/td1 bench ssb --sf 1 --runs 3 --json $OUT/ssb1.json 2>&1 | grep -v '^\s*$'
echo "== difftest: random queries, GPU vs CPU backend vs DataFusion (GPU required)"
$X --data-dir /tmp/tdr difftest --require-gpu 2>&1 | tail -12
D=/tmp/td20
echo "== SSB SF20 tessera + duckdb"
S=$D/bench/ssb-sf20  # the store bench made
$X --data-dir $D bench ssb --sf 20 --runs 5 --engine tessera --engine duckdb --json $OUT/ssb20.json --plot $OUT/ssb20.svg 2>&1 | grep -v '^\s*$'
for mode in inline parameters; do
  echo "== SSB SF20 EXPLAIN ANALYZE, literals $mode (each query twice first: warm)"
  f=/tmp/analyze_$mode.sql
  echo "SET tessera.kernel_literals = '$mode';" > $f
  for q in $Q/q*.sql; do sed '/^--/d' $q >> $f; sed '/^--/d' $q >> $f; echo "EXPLAIN ANALYZE" >> $f; sed '/^--/d' $q >> $f; done
  $X --format csv --data-dir $S sql $f 2>&1 | grep -E "^(tessera_analyze|GPU|pipeline|Error)"
done
echo "== literal modes: a new constant in q1.1 (kernel cache emptied first)"
for mode in inline parameters; do
  rm -rf $S/kernels
  f=/tmp/newconst_$mode.sql
  echo "SET tessera.kernel_literals = '$mode';" > $f
  sed '/^--/d' $Q/q1.1.sql >> $f
  echo "EXPLAIN ANALYZE" >> $f; sed '/^--/d; s/d_year = 1993/d_year = 1995/' $Q/q1.1.sql >> $f
  echo "EXPLAIN ANALYZE" >> $f; sed '/^--/d; s/d_year = 1993/d_year = 1995/' $Q/q1.1.sql >> $f
  echo "-- $mode: first run with 1995 (compile if inline), then again"
  $X --format csv --data-dir $S sql $f 2>&1 | grep -E "query:|kernels|error|Error"
done
echo "== cold: first query in a new process (store opened, columns uploaded, kernels from disk cache or compiled)"
for q in q1.1 q2.1 q3.1 q4.3; do
  for cache in warm-disk-cache empty-disk-cache; do
    [ $cache = empty-disk-cache ] && rm -rf $S/kernels
    s=$(date +%s.%N)
    $X --format csv --data-dir $S -c "EXPLAIN ANALYZE $(sed '/^--/d' $Q/$q.sql)" > /tmp/cold.txt 2>&1
    e=$(date +%s.%N)
    echo "$q $cache: process $(python3 -c "print(round($e - $s, 3))") s; $(grep -E 'query:|kernels|rror' /tmp/cold.txt | tr -d '"' | tr '\n' ' ')"
  done
done
echo "== TPC-H SF1 tessera + duckdb"
$X --data-dir /tmp/tdh1 bench tpch --sf 1 --runs 3 --engine tessera --engine duckdb --json $OUT/tpch1.json 2>&1 | grep -v '^\s*$'
date -u
