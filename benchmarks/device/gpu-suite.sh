#!/usr/bin/env bash
# Device runs for the CUDA backend's figures, in sections (each device command may run
# at most 10 minutes, so a session calls this two or three times on one warm machine):
#   tests   — the packed GPU unit tests alone
#   check   — GPU unit tests (if packed), SSB SF1 with answers checked, `tessera difftest`
#             (random queries, GPU vs CPU backend vs DataFusion, GPU required)
#   clients — SSB SF20 from 1..16 concurrent clients through `tessera serve`, GPU on and off,
#             beside the single-stream figures of Tessera and DuckDB
#   tpchclients — TPC-H SF10 from 1..16 concurrent clients through `tessera serve`, GPU on
#             and off
#   streams — SSB SF20 and TPC-H SF10 from $CLIENTS (default 1..32) concurrent clients,
#             each GPU query on a CUDA stream of its own (the default) and all on the
#             device's one stream (TESSERA_EXP_ONE_STREAM=1, as before query streams), in
#             turn; every answer checked against the CPU backend's; SSB single stream
#             beside DuckDB first
#   ssb20   — SSB SF20 Tessera beside DuckDB (answers checked against DuckDB; JSON + SVG,
#             GPU kernels beside the bandwidth model), then EXPLAIN ANALYZE of every query
#             for each tile shape in $ITEMS (tessera.gpu_items_per_thread; 0, the
#             default, chooses per pipeline)
#   cold    — first query in a new process (kernel disk cache warm and empty); a new
#             constant in q1.1 in both literal modes
#   store   — SSB SF20 loaded into a new tile store (timed), its size beside the same
#             tables in Parquet (the DuckDB export, made by ssb20), a shell's start,
#             tessera_storage('lineorder'); then TPC-H SF10 likewise and its q01 cold
#   storetpch — TPC-H SF10 alone: gen --load into a new store (timed), its tiles' size,
#             tessera_storage('lineitem'), TPC-H SF10 beside DuckDB (answers checked; its
#             Parquet export's size after), q01 as the first query of a new process
#   packed  — SSB SF20 with columns as bit-packed tiles decoded in the kernels
#             (TESSERA_EXP_PACKED=1) beside the plain default, in separate processes;
#             difftest with packed columns
#   packedab — SSB SF20 plain, packed and packed without runs, then TPC-H SF10 plain and
#             packed, each in its own process
#   ab      — SSB SF20 and TPC-H SF10 with the defaults and with the variable in $AB (e.g.
#             AB=TESSERA_EXP_ZONES=0 or AB=TESSERA_EXP_NARROW=0), each in its own process,
#             in turns (the first setting alternating by round), $ROUNDS rounds (default
#             2), $SSB_RUNS warm SSB runs (default 5); each setting's runs pooled over the
#             rounds (ab_json.py); then SSB SF1 and TPC-H SF1 both ways, answers checked
#   turns   — SSB at SF $SF (default 20) alone under each setting of $SETTINGS, each run
#             in its own process, $ROUNDS rounds (default 8) with the order rotating by
#             round, $SSB_RUNS warm runs (default 15); each setting's runs pooled over
#             the rounds (ab_json.py). A setting is NAME or NAME:VAR=value,VAR=value
#             (NAME alone: the defaults); BIN_NAME=path runs that setting with another
#             binary (e.g. one built at an earlier commit). Example:
#             SETTINGS="d x:TESSERA_EXP_LEAN_RESULTS=0 o" BIN_o=/tmp/old-tessera
#   ncutpch — Nsight Compute (duration, throughput, occupancy, launch statistics) on every
#             generated kernel of TPC-H SF10 $QUERIES (default q12), with the defaults and
#             with $AB (e.g. AB=TESSERA_EXP_ZONES=0)
#   zones   — zone-map pruning: TPC-H SF10's lineitem copied in ship-date order, then
#             q06, q14, q12 and q01 over it and over lineitem on the GPU and the CPU
#             backend (3 runs, answers compared by checksum; then in a new process a
#             warm-up run and 3 EXPLAIN ANALYZE runs)
#   ssb100  — SSB SF100, Tessera alone (fits the H200's memory)
#   ssb100duck — SSB SF100 beside DuckDB, answers checked against DuckDB's
#   tpch1   — TPC-H SF1 Tessera with the GPU and with tessera.device = 'cpu' in one process,
#             (taking turns run by run) beside DuckDB, all answers checked; then in a
#             process with the GPU off
#   answers — SSB and TPC-H SF1 with every answer checked (the last of 3 runs; lines
#             without a check mark only), then gpu_repeats.slt in two processes a backend
#             (split at its overflow: `tessera sql` stops at the first error) and
#             gpu_build_cache.slt on the GPU and the CPU backend, answers compared
#   results — the queries of $SLTS (default tests/slt/gpu_results, gpu_nulls, mark_joins, floats, decimal_division, gpu_top, gpu_host_results, distinct_aggregates, gpu_split_sorts, semi_joins planned for the CPU's shapes)
#             on the GPU and the CPU backend, answers compared, and EXPLAIN ANALYZE of each
#   joins   — `tessera bench joins`: the no-partition hash join against radix-partitioned
#             ones, build sides of 2^18..2^26 rows, 2^28 probe rows ($OUT/joins.json)
#   tpch10  — TPC-H SF10 Tessera beside DuckDB (JSON + SVG), then EXPLAIN ANALYZE of each
#   cpu16   — TPC-H SF10 and SSB SF20 through the CPU backend only (GPU off) beside DuckDB
#   cpuanalyze — EXPLAIN ANALYZE of every TPC-H SF10 query (or those in $QUERIES, e.g.
#             "q09 q13"), GPU off: each CPU pipeline's rows and times
#   phases  — EXPLAIN ANALYZE of TPC-H SF10 $QUERIES (default "q13 q18") with the
#             many-groups placement rule on and off: each GPU pipeline's host phases
#   difftests — $SEEDS (default 8) difftest runs at once ($PACKED_SEEDS of each batch with
#             packed columns, the next $NARROW_SEEDS narrowed), seeds $SEED0+1.. past the
#             default, each stopped after $DIFFTEST_SECONDS (default 500); batch after
#             batch for $DIFFTEST_BUDGET seconds when set; logs in $OUT/difftests.tgz
#   profile — Nsight Compute (ncu) on the SSB SF20 probe kernels of q3.1 and q4.1
#   source  — Nsight Compute's per-SASS-instruction stall samples of the probe kernels in
#             $SOURCE (default q3.1 and q3.2), reports and CSV into $OUT/ncu
#   breakdown — Nsight Compute's breakdown of the throughput figures (the busiest units)
#             of the probe kernels in $SOURCE (default q1.1, q3.1, q3.2)
#   eager   — EXPLAIN ANALYZE of SSB SF20 for each eager-load threshold in $EAGER
#   exp     — EXPLAIN ANALYZE of SSB SF20 for each set of experiment variables in $EXPS
#   tpchexp — EXPLAIN ANALYZE of TPC-H SF10 $QUERIES (default q01 q03 q04 q18 q21) for each
#             set of experiment variables in $EXPS, each in a process of its own: every
#             GPU pipeline's rows and kernel time, a line per setting and query
#   difftest — `tessera difftest` alone (e.g. under experiment variables)
#   dump    — the SSB SF20 kernels' sources into $OUT/kernels
#   answers1 — SSB and TPC-H SF1: every answer on the CPU backend, on the GPU with the
#             defaults (d) and with every table compact (c: tessera.gpu_compact_tables =
#             'always'); the lines where d and c differ from the CPU backend's counted
#   variants — the kernels' CUDA-event times of $SUITE (ssb, the default, or tpch) at SF
#             $SF (default 20; generated with gen --load when missing) under each setting
#             of $VARIANTS in turns, $ROUNDS rounds (default 3), $RUNS EXPLAIN ANALYZE a
#             query a round (default 5): a setting is NAME or NAME:A,B,… where each of A,
#             B is VAR=value (exported), `always` (every table compact) or `never` (none), e.g.
#             VARIANTS="d dq0:TESSERA_EXP_SCALAR_QUEUE=0 c:always cq0:always,TESSERA_EXP_SCALAR_QUEUE=0";
#             the log in $OUT/variants-$SUITE$SF.txt, each setting's median a query
#             (benchmarks/results/gpu-2026-11-30h/medians.py) in $OUT/medians-$SUITE$SF.txt
#
# Prepare here, from the project root (both folders are kept out of git):
#   cargo build --release -p tessera-cli
#   mkdir -p .devbin && strip -o /tmp/t target/release/tessera && xz -T2 -3 -c /tmp/t > .devbin/tessera.xz
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d .whl duckdb==1.5.5
#   (optional, for the GPU unit tests: ../shared/gpu/pack.sh -p tessera-cuda)
# Then on the device with carry [".gpu", ".whl"] (or [".devbin", ".whl"]):
#   bash benchmarks/device/gpu-suite.sh check ssb20 > $OUT/log1.txt 2>&1
set -u
# The binary: from ../shared/gpu/pack.sh's pack when carried (it holds the GPU unit tests
# too), else from .devbin.
if [ -f .gpu/pack.tar.xz ]; then
  mkdir -p /tmp/tessera-gpu && xz -dc -T0 .gpu/pack.tar.xz | tar -C /tmp/tessera-gpu -xf - && X=/tmp/tessera-gpu/bin/tessera
else
  X=/tmp/tessera; [ -x $X ] || { xz -dc .devbin/tessera.xz > $X && chmod +x $X; }
fi
[ -d /tmp/site/duckdb ] || python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"
done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
nproc; date -u
Q=benchmarks/ssb
ITEMS=${ITEMS:-0}  # tessera.gpu_items_per_thread values for EXPLAIN ANALYZE (0: per pipeline)
S20=/tmp/td20/bench/ssb-sf20  # the store `bench --sf 20` makes

tpch10_store() {  # the TPC-H SF10 store `bench tpch --sf 10` makes, generated when missing
  [ -d /tmp/tdh10/bench/tpch-sf10 ] || $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 2>&1 | tail -2
}

tpch_explain_sql() {  # $1: file to write, $2: warm runs of each query first, then the TPC-H queries (q01 …)
  local f=$1 warm=$2 q i
  shift 2
  : > $f
  for q in "$@"; do
    for i in $(seq 1 $warm); do sed '/^--/d' benchmarks/tpch/$q.sql >> $f; done
    echo "EXPLAIN ANALYZE" >> $f; sed '/^--/d' benchmarks/tpch/$q.sql >> $f
  done
}

analyze() {  # $1: store, $2: items per thread, $3: literal mode
  local f=/tmp/analyze.sql
  echo "SET tessera.gpu_items_per_thread = $2; SET tessera.kernel_literals = '$3';" > $f
  for q in $Q/q*.sql; do sed '/^--/d' $q >> $f; sed '/^--/d' $q >> $f; echo "EXPLAIN ANALYZE" >> $f; sed '/^--/d' $q >> $f; done
  $X --format csv --data-dir $1 sql $f 2>&1 | grep -E "^(tessera_analyze|GPU|pipeline|Error)|rror"
}

first_query() {  # $1: store, $2: query file, $3: warm-disk-cache or empty-disk-cache (emptied first)
  [ $3 = empty-disk-cache ] && rm -rf $1/kernels
  local s e
  s=$(date +%s.%N)
  $X --format csv --data-dir $1 -c "EXPLAIN ANALYZE $(sed '/^--/d' $2)" > /tmp/cold.txt 2>&1
  e=$(date +%s.%N)
  echo "$(basename $2 .sql) $3: process $(python3 -c "print(round($e - $s, 3))") s; $(grep -E 'query:|kernels|rror' /tmp/cold.txt | tr -d '"' | tr '\n' ' ')"
}

ncu_setup() {  # Nsight Compute's path into $NCU; the SSB SF20 store the profiles query in $P
  NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  P=/tmp/tdp
  [ -d $P ] || $X --data-dir $P gen ssb --sf 20 --load 2>&1 | tail -2
}

ncu_query() {  # $1: query, $2: generated kernels launched before its probe kernel, then ncu's options
  local q=$1 skip=$2
  shift 2
  $NCU --clock-control none --kernel-name tessera_pipeline --launch-skip $skip --launch-count 1 "$@" \
    $X --data-dir $P -c "$(sed '/^--/d' $Q/$q.sql)"
}

split_setting() {  # $1: a setting NAME or NAME:A,B,… (`variants`, `turns`) into $name and $vars (A,B,…)
  name=${1%%:*}; vars=""; [ "$1" != "$name" ] && vars=${1#*:}
}

apply_setting() {  # $1: a setting's A,B,…: exports each VAR=value; `always` or `never` sets $compact instead
  compact=""
  local a
  for a in ${1//,/ }; do case "$a" in always|never) compact=$a ;; *) export "$a" ;; esac; done
}

query_line() {  # $1: a query file: its query on one line, without comments or the final ;
  sed '/^--/d' $1 | tr '\n' ' ' | sed 's/;\s*$//'
}

suite_queries() {  # $1: ssb or tpch; $2: file to write, each query on one line
  : > $2
  for f in benchmarks/$1/q*.sql; do echo "$(query_line $f);" >> $2; done
}

variant_analyze() {  # $1: suite, $2: store, $3: EXPLAIN ANALYZE runs a query, $4: `always`, `never` or empty
  local f=/tmp/variant.sql p q s i
  : > $f
  [ -n "$4" ] && echo "SET tessera.gpu_compact_tables = '$4';" >> $f
  for p in benchmarks/$1/q*.sql; do
    q=$(basename $p .sql); [ $1 = tpch ] && q=$(echo $q | sed 's/^q0*/q/').0
    s=$(query_line $p)
    echo "SELECT 'MARK $q' AS m;" >> $f; echo "$s;" >> $f
    for i in $(seq $3); do echo "EXPLAIN ANALYZE $s;" >> $f; done
  done
  $X --format csv --data-dir $2 sql $f 2>&1 | grep -oE "MARK q[0-9.]+|GPU kernels: [0-9.]+ ms in total, bandwidth model [0-9.]+ ms|GPU column cache [0-9.]+ MB|rror.*"
}

for section in "$@"; do
  echo "===== $section"
  case $section in
  tests)
    # The packed GPU unit tests alone (GPU and NVRTC required).
    for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^called|^  left|^ right"; done
    ;;
  check)
    if [ -d /tmp/tessera-gpu/tests ]; then
      for t in /tmp/tessera-gpu/tests/*; do TESSERA_REQUIRE_GPU=1 TESSERA_REQUIRE_NVRTC=1 $t 2>&1 | grep -E "^(test result|test .*FAILED|failures)|panicked|skipped|^called|^  left|^ right"; done
    fi
    echo "== SSB SF1 (answers checked)"
    $X --data-dir /tmp/td1 bench ssb --sf 1 --runs 3 --json $OUT/ssb1.json 2>&1 | grep -v '^\s*$'
    echo "== difftest: random queries, GPU vs CPU backend vs DataFusion (GPU required)"
    $X --data-dir /tmp/tdr difftest --require-gpu 2>&1 | tail -12
    ;;
  clients)
    # Concurrent clients through `tessera serve` (PostgreSQL protocol over loopback):
    # SSB SF20 beside the single-stream figures of Tessera and DuckDB in the same run,
    # then the CPU backend alone (GPU off) for the same curve; $CLIENTS counts.
    echo "== SSB SF20 single stream: tessera + duckdb"
    $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 3 --engine tessera --engine duckdb --json $OUT/ssb20-single.json 2>&1 | grep -v '^\s*$'
    echo "== SSB SF20 from concurrent clients through tessera serve"
    $X --data-dir /tmp/td20 bench ssb --sf 20 --clients ${CLIENTS:-1,2,4,8,16} --seconds ${SECONDS_PER:-8} --json $OUT/ssb20-clients.json 2>&1 | grep -v '^\s*$'
    echo "== the same, GPU off (CPU backend)"
    TESSERA_DISABLE_GPU=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --clients ${CLIENTS:-1,2,4,8,16} --seconds ${SECONDS_PER:-8} --json $OUT/ssb20-clients-cpu.json 2>&1 | grep -v '^\s*$'
    ;;
  streams)
    echo "== SSB SF20 single stream: tessera + duckdb"
    $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 3 --engine tessera --engine duckdb --json $OUT/ssb20-single.json 2>&1 | grep -v '^\s*$'
    for suite in "ssb 20 /tmp/td20" "tpch 10 /tmp/tdh10"; do
      read -r name sf dir <<< "$suite"
      for mode in streams one; do
        echo "== $name SF$sf from concurrent clients, $mode"
        [ $mode = one ] && export TESSERA_EXP_ONE_STREAM=1 || unset TESSERA_EXP_ONE_STREAM
        $X --data-dir $dir bench $name --sf $sf --clients ${CLIENTS:-1,2,4,8,16,32} --seconds ${SECONDS_PER:-6} --json $OUT/$name$sf-clients-$mode.json 2>&1 | grep -v '^\s*$'
      done
    done
    unset TESSERA_EXP_ONE_STREAM
    ;;
  tpchclients)
    # TPC-H SF10 from concurrent clients through `tessera serve`, GPU on and off (the
    # store tpch10 makes; generated when missing).
    tpch10_store
    echo "== TPC-H SF10 from concurrent clients through tessera serve"
    $X --data-dir /tmp/tdh10 bench tpch --sf 10 --clients ${CLIENTS:-1,2,4,8,16} --seconds ${SECONDS_PER:-8} --json $OUT/tpch10-clients.json 2>&1 | grep -v '^\s*$'
    echo "== the same, GPU off (CPU backend)"
    TESSERA_DISABLE_GPU=1 $X --data-dir /tmp/tdh10 bench tpch --sf 10 --clients ${CLIENTS:-1,2,4,8,16} --seconds ${SECONDS_PER:-8} --json $OUT/tpch10-clients-cpu.json 2>&1 | grep -v '^\s*$'
    ;;
  ssb20)
    echo "== SSB SF20 tessera + duckdb"
    $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 5 --engine tessera --engine duckdb --json $OUT/ssb20.json --plot $OUT/ssb20.svg 2>&1 | grep -v '^\s*$'
    for n in $ITEMS; do
      echo "== SSB SF20 EXPLAIN ANALYZE, $n items per thread, literals as parameters (each query twice first: warm)"
      analyze $S20 $n parameters
    done
    ;;
  cold)
    echo "== literal modes: a new constant in q1.1 (kernel cache emptied first)"
    for mode in inline parameters; do
      rm -rf $S20/kernels
      f=/tmp/newconst_$mode.sql
      echo "SET tessera.kernel_literals = '$mode';" > $f
      sed '/^--/d' $Q/q1.1.sql >> $f
      echo "EXPLAIN ANALYZE" >> $f; sed '/^--/d; s/d_year = 1993/d_year = 1995/' $Q/q1.1.sql >> $f
      echo "EXPLAIN ANALYZE" >> $f; sed '/^--/d; s/d_year = 1993/d_year = 1995/' $Q/q1.1.sql >> $f
      echo "-- $mode: first run with 1995 (compile if inline), then again"
      $X --format csv --data-dir $S20 sql $f 2>&1 | grep -E "query:|kernels|rror"
    done
    echo "== cold: first query in a new process (store opened, columns uploaded, kernels from disk cache or compiled)"
    for q in q1.1 q2.1 q3.1 q4.3; do
      for cache in warm-disk-cache empty-disk-cache; do first_query $S20 $Q/$q.sql $cache; done
    done
    ;;
  store)
    echo "== SSB SF20 gen --load into a new store"
    rm -rf /tmp/td20
    $X --data-dir $S20 gen ssb --sf 20 --load 2>&1 | tail -6
    echo "== store bytes: tiles (data/), and Parquet (export/, once ssb20 has run)"
    du -sb $S20/data $S20/export 2>/dev/null
    echo "== a shell's start to its prompt, then .quit (new process each), s"
    for i in 1 2 3 4 5; do s=$(date +%s.%N); echo .quit | $X --data-dir $S20 > /dev/null; e=$(date +%s.%N); python3 -c "print(round($e - $s, 3))"; done
    echo "== a new process running SELECT 1 (the GPU opened for it), s"
    for i in 1 2 3; do s=$(date +%s.%N); $X --data-dir $S20 -c "SELECT 1" > /dev/null; e=$(date +%s.%N); python3 -c "print(round($e - $s, 3))"; done
    echo "== tessera_storage('lineorder')"
    $X --format csv --data-dir $S20 -c "SELECT column_name, tiles, encodings, stored_bytes, arrow_bytes, round(ratio, 2) AS ratio FROM tessera_storage('lineorder')"
    echo "== TPC-H SF10 gen --load into a new store"
    H10=/tmp/tdh10/bench/tpch-sf10
    rm -rf /tmp/tdh10
    $X --data-dir $H10 gen tpch --sf 10 --load 2>&1 | tail -9
    du -sb $H10/data
    $X --format csv --data-dir $H10 -c "SELECT column_name, tiles, encodings, stored_bytes, arrow_bytes, round(ratio, 2) AS ratio FROM tessera_storage('lineitem')"
    echo "== TPC-H SF10 q01: first query in a new process (kernel disk cache warm, then empty)"
    for cache in warm-disk-cache empty-disk-cache warm-disk-cache; do first_query $H10 benchmarks/tpch/q01.sql $cache; done
    ;;
  storetpch)
    H10=/tmp/tdh10/bench/tpch-sf10
    rm -rf /tmp/tdh10
    echo "== TPC-H SF10 gen --load into a new store"
    s=$(date +%s.%N); $X --data-dir $H10 gen tpch --sf 10 --load 2>&1 | tail -9; e=$(date +%s.%N); python3 -c "print('gen --load', round($e - $s, 2), 's')"
    du -sb $H10/data
    $X --format csv --data-dir $H10 -c "SELECT column_name, tiles, encodings, stored_bytes, arrow_bytes, round(ratio, 2) AS ratio FROM tessera_storage('lineitem')"
    echo "== TPC-H SF10 q01: first query in a new process (kernel disk cache empty, then warm)"
    for cache in empty-disk-cache warm-disk-cache warm-disk-cache; do first_query $H10 benchmarks/tpch/q01.sql $cache; done
    echo "== TPC-H SF10 tessera + duckdb (answers checked against DuckDB)"
    $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --engine duckdb --json $OUT/tpch10.json 2>&1 | grep -v '^\s*$'
    echo "== store bytes: tiles (data/) and the same tables in Parquet (export/, DuckDB's input)"
    du -sb $H10/data $H10/export 2>/dev/null
    ;;
  packed)
    echo "== SSB SF20, plain arrays uploaded (the default)"
    $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 5 --engine tessera --json $OUT/ssb20-plain.json 2>&1 | grep -v '^\s*$'
    echo "== SSB SF20, TESSERA_EXP_PACKED=1 (bit-packed tiles decoded in the kernels), in its own process"
    TESSERA_EXP_PACKED=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 5 --engine tessera --json $OUT/ssb20-packed.json 2>&1 | grep -v '^\s*$'
    echo "== difftest with TESSERA_EXP_PACKED=1 (GPU required)"
    TESSERA_EXP_PACKED=1 $X --data-dir /tmp/tdrp difftest --require-gpu 2>&1 | tail -4
    ;;
  packedab)
    # Plain against packed columns, each in its own process, in turns: SSB SF20 plain,
    # packed (TESSERA_EXP_PACKED=1), packed without runs (TESSERA_EXP_RUNS=0), then TPC-H
    # SF10 plain and packed (answers checked against the stored ones at SF1 only: compare
    # the runs' row counts).
    for mode in plain packed packed-noruns; do
      echo "== SSB SF20, $mode"
      ( [ $mode = plain ] || export TESSERA_EXP_PACKED=1; [ $mode = packed-noruns ] && export TESSERA_EXP_RUNS=0
        $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 5 --engine tessera --json $OUT/ssb20-$mode.json 2>&1 | grep -v '^\s*$' )
    done
    for mode in plain packed; do
      echo "== TPC-H SF10, $mode"
      ( [ $mode = plain ] || export TESSERA_EXP_PACKED=1
        $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --json $OUT/tpch10-$mode.json 2>&1 | grep -v '^\s*$' )
    done
    ;;
  ab)
    # Each setting in its own process, in turns; the first setting alternates by round (a
    # machine's state drifts over a run). JSON as ab-SUITE-rROUND-eSETTING.json (d: the
    # defaults, x: $AB), pooled per setting by ab_json.py.
    for r in $(seq 1 ${ROUNDS:-2}); do
      order="d x"; [ $((r % 2)) = 0 ] && order="x d"
      for e in $order; do
        for suite in "ssb --sf 20 --runs ${SSB_RUNS:-5}" "tpch --sf 10 --runs 3"; do
          set -- $suite; name=$1$3
          mode=default; [ $e = x ] && mode=$AB
          echo "== $name, $mode, round $r"
          ( [ $e = d ] || export $AB
            $X --data-dir /tmp/td$name bench $suite --engine tessera --json $OUT/ab-$name-r$r-e$e.json 2>&1 | grep -E "^│ total" )
        done
      done
    done
    for name in ssb20 tpch10; do
      echo "== $name pooled (d: defaults, x: $AB)"
      python3 benchmarks/results/gpu-2026-11-27j/ab_json.py $OUT ab-$name
    done
    for mode in default $AB; do
      echo "== SSB SF1 and TPC-H SF1, $mode (answers checked)"
      ( [ $mode = default ] || export $mode
        for suite in ssb tpch; do $X --data-dir /tmp/td${suite}1 bench $suite --sf 1 --runs 2 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8; done )
    done
    ;;
  turns)
    # The rounds' settings in turns: round r starts at the r-th setting (a machine's
    # state drifts over a run, and the first process of a round finds its caches cold).
    # JSON as turns-ssbSF-rROUND-eNAME.json.
    sf=${SF:-20}; set -- ${SETTINGS:-d}; n=$#; names=("$@")
    [ -d /tmp/tdturns$sf ] || $X --data-dir /tmp/tdturns$sf bench ssb --sf $sf --runs 1 --engine tessera --queries q1.1 > /dev/null 2>&1
    for r in $(seq 1 ${ROUNDS:-8}); do
      for k in $(seq 0 $((n - 1))); do
        split_setting ${names[$(((r - 1 + k) % n))]}
        bin_var=BIN_$name; B=${!bin_var:-$X}
        total=$( ( apply_setting "$vars"
          [ -n "$compact" ] && echo "turns: '$compact' is for variants (bench runs take no SET); $name runs without it" >&2
          $B --data-dir /tmp/tdturns$sf bench ssb --sf $sf --runs ${SSB_RUNS:-15} --engine tessera --json $OUT/turns-ssb$sf-r$r-e$name.json 2>&1 | grep -E "^│ total" ) )
        echo "== $name (${vars:-defaults}${B:+, $B}) round $r: $total"
      done
    done
    python3 benchmarks/results/gpu-2026-11-27j/ab_json.py $OUT turns-ssb$sf
    ;;
  ncutpch)
    NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
    D=/tmp/tdh10/bench/tpch-sf10
    [ -d $D ] || $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera --queries q06 2>&1 | tail -1
    for q in ${QUERIES:-q12}; do
      for mode in default $AB; do
        echo "== ncu TPC-H SF10 $q, $mode"
        ( [ $mode = default ] || export $mode
          $NCU --clock-control none --kernel-name tessera_pipeline --section SpeedOfLight --section Occupancy --section LaunchStats \
            $X --data-dir $D -c "$(sed '/^--/d' benchmarks/tpch/$q.sql)" 2>&1 | grep -E "tessera_pipeline|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Memory Throughput|Compute \(SM\) Throughput|Grid Size|Shared Memory Config|Block Limit" )
      done
    done
    ;;
  zones)
    D=/tmp/tdh10/bench/tpch-sf10
    [ -d $D ] || $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 1 --engine tessera 2>&1 | tail -1
    s0=$(date +%s.%N)
    $X --data-dir $D -c "CREATE TABLE lineitem_by_date AS SELECT * FROM lineitem ORDER BY l_shipdate" 2>&1 | tail -2
    echo "lineitem_by_date written in $(python3 -c "import time; print(round(time.time() - $s0, 1))") s"
    for q in q06 q14 q12 q01; do
      for t in lineitem lineitem_by_date; do
        for dev in gpu cpu; do
          f=/tmp/zq.sql; sql=$(sed '/^--/d' benchmarks/tpch/$q.sql | sed "s/\blineitem\b/$t/g")
          { echo "SET tessera.device = '$dev';"; echo "$sql"; echo "$sql"; echo "$sql"; } > $f
          $X --format csv --data-dir $D sql $f > /tmp/zans.txt 2>&1
          tail -n +2 /tmp/zans.txt | md5sum | sed "s/ .*//;s/^/$q $t $dev answer md5 /"
          { echo "SET tessera.device = '$dev';"; echo "$sql"; for k in 1 2 3; do echo "EXPLAIN ANALYZE $sql"; done; } > $f
          $X --format csv --data-dir $D sql $f 2>&1 | grep -E "query:|GPU kernels|pipeline [0-9]+ \[GPU\]: [0-9]{7,}|rror" | sed "s/^/$q $t $dev: /" | cut -c1-400
        done
      done
    done
    ;;
  eager)
    # EXPLAIN ANALYZE of every query for each threshold in $EAGER (the experiment's
    # TESSERA_EXP_EAGER_SECTORS: 0 loads every column up front, above 1 none), prefetch
    # in $PREFETCH (TESSERA_EXP_PREFETCH=0 turns it off; `default` leaves it), resident
    # blocks per SM compiled for in $MINB (TESSERA_EXP_MIN_BLOCKS; `default`: none) and
    # tile shape in $ITEMS.
    # $STORE: another SSB store to analyze instead (e.g. /tmp/td100/bench/ssb-sf100).
    ST=${STORE:-$S20}
    [ -d $ST ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera 2>&1 | tail -3
    for v in ${EAGER:-0 0.5 1.01}; do
      for p in ${PREFETCH:-default}; do
        for b in ${MINB:-default}; do
          for n in $ITEMS; do
            echo "== SSB SF20 EXPLAIN ANALYZE, TESSERA_EXP_EAGER_SECTORS=$v, TESSERA_EXP_PREFETCH=$p, TESSERA_EXP_MIN_BLOCKS=$b, $n items per thread"
            ( [ $p = default ] || export TESSERA_EXP_PREFETCH=$p; [ $b = default ] || export TESSERA_EXP_MIN_BLOCKS=$b
              TESSERA_EXP_EAGER_SECTORS=$v analyze $ST $n parameters )
          done
        done
      done
    done
    ;;
  exp)
    # EXPLAIN ANALYZE of every query once per setting in $EXPS: each a comma-separated
    # list of experiment variables to export (`-`: none), e.g.
    # EXPS="- TESSERA_EXP_SEEN_BITMAP=0 TESSERA_EXP_CARVEOUT=fit -", and each for every
    # tile shape in $ITEMS. $STORE as in eager.
    ST=${STORE:-$S20}
    [ -d $ST ] || $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 1 --engine tessera 2>&1 | tail -3
    for e in ${EXPS:--}; do
      for it in $ITEMS; do
        echo "== SSB SF20 EXPLAIN ANALYZE, $e, $it items per thread"
        ( [ "$e" = - ] || for a in ${e//,/ }; do export "$a"; done
          analyze $ST $it parameters )
      done
    done
    ;;
  difftest)
    # The random queries alone, under whatever experiment variables the caller set.
    $X --data-dir /tmp/tdr difftest --require-gpu 2>&1 | tail -12
    ;;
  answers1)
    for s in ssb tpch; do
      D1=/tmp/td${s}1/bench/$s-sf1
      [ -d $D1 ] || $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 1 --engine tessera > /dev/null 2>&1
      suite_queries $s /tmp/$s-q.sql
      $X --format csv --data-dir $D1 sql <(echo "SET tessera.device = 'cpu';"; cat /tmp/$s-q.sql) > /tmp/$s-cpu.out 2>&1
      $X --format csv --data-dir $D1 sql /tmp/$s-q.sql > /tmp/$s-d.out 2>&1
      $X --format csv --data-dir $D1 sql <(echo "SET tessera.gpu_compact_tables = 'always';"; cat /tmp/$s-q.sql) > /tmp/$s-c.out 2>&1
      for m in d c; do echo "== $s SF1 $m against the CPU backend: $(wc -l < /tmp/$s-cpu.out) lines, $(diff /tmp/$s-cpu.out /tmp/$s-$m.out | grep -c '^[<>]') differ"; done
    done
    ;;
  variants)
    SV=${SUITE:-ssb}; FV=${SF:-20}
    ST=/tmp/tdv-$SV$FV
    big=lineorder; [ $SV = tpch ] && big=lineitem
    grep -q $big $ST/manifest.json 2>/dev/null || { rm -rf $ST; /usr/bin/time -f "gen --load %e s" $X --data-dir $ST gen $SV --sf $FV --load > /dev/null; }
    for round in $(seq 1 ${ROUNDS:-3}); do
      for v in ${VARIANTS:-d}; do
        split_setting $v
        echo "== $name round $round"
        ( apply_setting "$vars"
          variant_analyze $SV $ST ${RUNS:-5} "$compact" )
      done
    done > $OUT/variants-$SV$FV.txt 2>&1
    python3 benchmarks/results/gpu-2026-11-30h/medians.py $OUT/variants-$SV$FV.txt > $OUT/medians-$SV$FV.txt
    tr '|' '\n' < $OUT/medians-$SV$FV.txt
    ;;
  dump)
    # The SSB SF20 kernels as generated (kernel cache emptied first) into $OUT/kernels.
    rm -rf $S20/kernels
    ( export TESSERA_DUMP_KERNELS=$OUT/kernels; analyze $S20 0 parameters > /dev/null )
    ls $OUT/kernels | wc -l
    ;;
  ssb100)
    rm -rf /tmp/td20 /tmp/tdr
    echo "== SSB SF100 tessera alone"
    /usr/bin/time -v $X --data-dir /tmp/td100 bench ssb --sf 100 --runs 3 --json $OUT/ssb100.json 2>&1 | grep -vE '^\s*$' | grep -vE "^\s+(Page|Vol|Invol|Swaps|File|Socket|Signals|Average|Exit|Minor|Major|Percent|System|User)"
    echo "== SSB SF100: the GPU column cache after all 13 queries, packed (TESSERA_EXP_PACKED=1) and plain (the default)"
    f=/tmp/ssb100.sql; : > $f
    for q in $Q/q*.sql; do sed '/^--/d' $q >> $f; done
    echo "EXPLAIN ANALYZE $(sed '/^--/d' $Q/q4.3.sql)" >> $f
    for p in 1 0; do TESSERA_EXP_PACKED=$p $X --format csv --data-dir /tmp/td100/bench/ssb-sf100 sql $f 2>&1 | grep -E "GPU kernels|rror" | sed "s/^/packed=$p: /"; done
    $X --format csv --data-dir /tmp/td100/bench/ssb-sf100 -c "SELECT sum(stored_bytes) AS stored, sum(arrow_bytes) AS arrow FROM tessera_storage('lineorder')"
    ;;
  ssb100duck)
    # SSB SF100 beside DuckDB: Tessera's answers checked against DuckDB's. DuckDB loads the
    # store's Parquet files into memory, which does not fit the 128 GiB host beside
    # Tessera's loaded tables: the data is generated in a process of its own and DuckDB
    # runs first, before Tessera loads anything.
    rm -rf /tmp/td20 /tmp/tdr /tmp/tdp
    [ -d /tmp/td100/bench/ssb-sf100 ] || $X --data-dir /tmp/td100/bench/ssb-sf100 gen ssb --sf 100 --load 2>&1 | tail -1
    echo "== SSB SF100 duckdb + tessera"
    /usr/bin/time -v $X --data-dir /tmp/td100 bench ssb --sf 100 --runs 3 --engine duckdb --engine tessera --json $OUT/ssb100.json 2>&1 | grep -vE '^\s*$' | grep -vE "^\s+(Page|Vol|Invol|Swaps|File|Socket|Signals|Average|Exit|Minor|Major|Percent|System|User)"
    ;;
  profile)
    # Nsight Compute on the probe kernels of the queries furthest from the model: the
    # N-th launch of a generated kernel is the probe pipeline after N builds.
    ncu_setup
    for qs in q3.1:3 q4.1:4; do
      q=${qs%:*}; skip=${qs#*:}
      echo "== ncu $q (probe kernel, launch $((skip + 1)) of tessera_pipeline)"
      ncu_query $q $skip \
        --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
        --section SchedulerStats --section WarpStateStats 2>&1 | grep -vE "^==PROF==|^\s*$" | tail -120
    done
    ;;
  source)
    # Nsight Compute's per-instruction view (warp stall samples per SASS instruction) of
    # the probe kernels in $SOURCE (query:builds before it; default q3.1 and q3.2), with
    # the memory tables: the reports into $OUT/ncu, and each as CSV beside it.
    ncu_setup
    mkdir -p $OUT/ncu
    for qs in ${SOURCE:-q3.1:3 q3.2:3}; do
      q=${qs%:*}; skip=${qs#*:}
      echo "== ncu source $q (probe kernel, launch $((skip + 1)) of tessera_pipeline)"
      ncu_query $q $skip \
        --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
        --section Occupancy --section SchedulerStats --section WarpStateStats --section SourceCounters \
        -o $OUT/ncu/$q -f 2>&1 | grep -vE "^==PROF==|^\s*$" | tail -5
      $NCU -i $OUT/ncu/$q.ncu-rep --page details 2>&1 | grep -vE "^\s*$" | head -150
      $NCU -i $OUT/ncu/$q.ncu-rep --page source --csv --print-source sass > $OUT/ncu/$q-sass.csv 2>&1
      wc -l $OUT/ncu/$q-sass.csv
      python3 benchmarks/tools/sass_summary.py $OUT/ncu/$q-sass.csv 40
    done
    ;;
  breakdown)
    # Nsight Compute's breakdown of the memory and compute throughput figures (which unit
    # is busiest) for the probe kernels in $SOURCE (as in source; default q1.1 q3.1 q3.2).
    ncu_setup
    for qs in ${SOURCE:-q1.1:1 q3.1:3 q3.2:3}; do
      q=${qs%:*}; skip=${qs#*:}
      echo "== ncu breakdown $q (probe kernel, launch $((skip + 1)) of tessera_pipeline)"
      ncu_query $q $skip \
        --metrics breakdown:gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,lts__t_sectors_op_red.sum,lts__t_sectors_op_atom.sum,lts__t_sectors_op_write.sum,dram__bytes_read.sum 2>&1 | grep -vE "^==PROF==|^\s*$|^│|^┌|^└|^╞|^├" | tail -60
    done
    ;;
  joins)
    $X bench joins --runs ${JOIN_RUNS:-5} --json $OUT/joins.json 2>&1
    ;;
  tpch1)
    # tessera-cpu: the same process under tessera.device = 'cpu' (separate processes
    # differ by up to a fifth on the same CPU-backend queries), the two taking turns run
    # by run (passes one after the other differed by the order they ran in).
    echo "== TPC-H SF1 tessera, tessera-cpu (tessera.device = 'cpu', same process) + duckdb"
    $X --data-dir /tmp/tdh1 bench tpch --sf 1 --runs ${TPCH1_RUNS:-7} --engine tessera --engine tessera-cpu --engine duckdb --json $OUT/tpch1.json 2>&1 | grep -v '^\s*$'
    echo "== TPC-H SF1 in a process without the GPU (TESSERA_DISABLE_GPU=1)"
    TESSERA_DISABLE_GPU=1 $X --data-dir /tmp/tdh1 bench tpch --sf 1 --runs 3 --engine tessera --json $OUT/tpch1-cpu.json 2>&1 | grep -v '^\s*$'
    ;;
  answers)
    for s in ssb tpch; do
      $X --data-dir /tmp/td${s}1 bench $s --sf 1 --runs 3 --engine tessera 2>&1 | grep -E "^│ (q|total)" | grep -vE "✓" | head -8
    done
    # An slt file's statements and queries, one a line, without its device settings.
    slt_sql() { awk '/^(statement|query)/{on=1; buf=""; next} on&&(/^----$/||/^$/){if(buf!="") print buf ";"; on=0; next} on{buf=buf (buf==""?"":" ") $0} END{if(on&&buf!="") print buf ";"}' tests/slt/$1.slt | grep -v "^SET tessera.device"; }
    slt_sql gpu_repeats > /tmp/rep.sql
    n=$(grep -n "SELECT sum(x) FROM o" /tmp/rep.sql | head -1 | cut -d: -f1)
    head -n $((n - 1)) /tmp/rep.sql > /tmp/rep-a.sql; tail -n +$((n + 2)) /tmp/rep.sql > /tmp/rep-b.sql
    slt_sql gpu_build_cache > /tmp/rep-c.sql
    for dev in gpu cpu; do
      rm -rf /tmp/tdrep-$dev /tmp/tdcache-$dev
      for part in a b c; do
        d=/tmp/tdrep-$dev; [ $part = c ] && d=/tmp/tdcache-$dev
        (echo "SET tessera.device = '$dev';"; cat /tmp/rep-$part.sql) > /tmp/rep-$part-$dev.sql
        $X --format csv --data-dir $d sql /tmp/rep-$part-$dev.sql > /tmp/rep-$part-$dev.txt 2>&1
      done
    done
    for part in a b c; do
      name="gpu_repeats part $part"; [ $part = c ] && name=gpu_build_cache
      cmp /tmp/rep-$part-gpu.txt /tmp/rep-$part-cpu.txt && echo "$name: GPU and CPU answers identical ($(wc -l < /tmp/rep-$part-gpu.txt) lines, $(grep -ci rror /tmp/rep-$part-gpu.txt) errors)"
    done
    ;;
  results)
    # Pipelines over aggregations' results, over NULLs and mark joins: each of $SLTS'
    # (default tests/slt/gpu_results, gpu_nulls, mark_joins, floats, decimal_division, gpu_top, gpu_host_results, distinct_aggregates, gpu_split_sorts, semi_joins) statements and queries through
    # `tessera sql` on the GPU and on the CPU backend, answers compared (rows sorted), and
    # EXPLAIN ANALYZE of each on the GPU (where the result stayed).
    # A name with `@cpu` (semi_joins@cpu) plans its queries for the CPU's shapes
    # (`tessera.plan_for = 'cpu'`): semi/anti joins run from their large side, whose
    # marks are then made on the GPU.
    for entry in ${SLTS:-gpu_results gpu_nulls mark_joins floats decimal_division gpu_top gpu_host_results distinct_aggregates gpu_split_sorts semi_joins@cpu}; do
      slt=${entry%@*}; shape=""
      [ "$entry" != "$slt" ] && shape="SET tessera.plan_for = '${entry#*@}';"
      d=/tmp/tdres-$slt; rm -rf $d
      awk '/^(statement ok|query)/{on=1; buf=""; next} on&&(/^----$/||/^$/){if(buf!="") print buf ";"; on=0; next} on{buf=buf (buf==""?"":" ") $0} END{if(on&&buf!="") print buf ";"}' tests/slt/$slt.slt \
        | grep -v "^SET tessera.device" > /tmp/res_all.sql
      grep -E "^CREATE|^INSERT" /tmp/res_all.sql > /tmp/res_setup.sql
      grep -E "^SELECT" /tmp/res_all.sql > /tmp/res_q.sql
      $X --data-dir $d sql /tmp/res_setup.sql 2>&1 | grep -i "rror"
      for dev in gpu cpu; do
        (echo "SET tessera.device = '$dev';"; echo "$shape"; cat /tmp/res_q.sql) > /tmp/res_$dev.sql
        $X --format csv --data-dir $d sql /tmp/res_$dev.sql > $OUT/$slt-$dev.txt 2>&1
      done
      echo "$slt: queries: $(wc -l < /tmp/res_q.sql); errors: $(grep -ci rror $OUT/$slt-gpu.txt) (GPU), $(grep -ci rror $OUT/$slt-cpu.txt) (CPU)"
      cmp <(sort $OUT/$slt-gpu.txt) <(sort $OUT/$slt-cpu.txt) && echo "$slt: GPU and CPU answers identical ($(wc -l < $OUT/$slt-gpu.txt) lines)"
      (echo "SET tessera.device = 'gpu';"; echo "$shape"; sed 's/^/EXPLAIN ANALYZE /' /tmp/res_q.sql) > /tmp/res_analyze.sql
      $X --data-dir $d sql /tmp/res_analyze.sql > $OUT/$slt-analyze.txt 2>&1
      echo "$slt: pipelines on the GPU: $(grep -cE 'Pipeline [0-9]+ .GPU' $OUT/$slt-analyze.txt), on the CPU: $(grep -cE 'Pipeline [0-9]+ .CPU' $OUT/$slt-analyze.txt); kept on the GPU: $(grep -c 'kept on the GPU' $OUT/$slt-analyze.txt)"
      grep -E 'Pipeline [0-9]+ .CPU' $OUT/$slt-analyze.txt | sed 's/^ *//' | sort | uniq -c | sort -rn | head -20
    done
    ;;
  tpch10)
    echo "== TPC-H SF10 tessera + duckdb"
    $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --engine duckdb --json $OUT/tpch10.json --plot $OUT/tpch10.svg 2>&1 | grep -v '^\s*$'
    echo "== TPC-H SF10 EXPLAIN ANALYZE (each query once first: warm)"
    f=/tmp/tpch10.sql; tpch_explain_sql $f 1 $(cd benchmarks/tpch && ls q*.sql | sed 's/.sql//')
    $X --data-dir /tmp/tdh10/bench/tpch-sf10 sql $f > $OUT/tpch10-analyze.txt 2>&1
    echo "pipelines on the GPU: $(grep -cE 'Pipeline [0-9]+ .GPU' $OUT/tpch10-analyze.txt)"; grep -E "rror" $OUT/tpch10-analyze.txt | head
    ;;
  tpchexp)
    # Per-pipeline kernel times of TPC-H SF10 queries under experiment switches (as run 9
    # and 13 of 2026-11-27e did by hand), e.g. EXPS="- TESSERA_EXP_PREFETCH=0 TESSERA_EXP_PACKED=1".
    tpch10_store
    f=/tmp/tpchexp.sql; tpch_explain_sql $f 2 ${QUERIES:-q01 q03 q04 q18 q21}
    for e in ${EXPS:--}; do
      echo "== TPC-H SF10 EXPLAIN ANALYZE, $e (queries: ${QUERIES:-q01 q03 q04 q18 q21})"
      ( [ "$e" = - ] || for a in ${e//,/ }; do export "$a"; done
        $X --format csv --data-dir /tmp/tdh10/bench/tpch-sf10 sql $f 2>&1 \
          | grep -oE "pipeline [0-9]+ \[GPU\]: [0-9]+ rows in, [0-9]+ rows out, kernel [0-9.]+ ms|GPU kernels: [0-9.]+ ms|rror.*" \
          | sed 's/ rows in, / -> /; s/ rows out, kernel/:/' | awk '/^GPU kernels/ {print line "; " $0; line=""; next} {line = line (line ? "; " : "") $0}' )
    done
    ;;
  phases)
    tpch10_store
    f=/tmp/phases.sql; tpch_explain_sql $f 1 ${QUERIES:-q13 q18}
    for e in 0 1; do
      echo "== TESSERA_EXP_MANY_GROUPS_ON_GPU=$e"
      TESSERA_EXP_MANY_GROUPS_ON_GPU=$e $X --data-dir /tmp/tdh10/bench/tpch-sf10 sql $f 2>&1 | grep -E "pipeline [0-9]+ \[|query:" | sed 's/  */ /g'
    done
    ;;
  cpu16)
    # The CPU backend on the host's cores, GPU off, beside DuckDB (issue #20's figures);
    # uses the stores tpch10 and ssb20 make (generates them when missing).
    echo "== TPC-H SF10, TESSERA_DISABLE_GPU=1, tessera + duckdb"
    TESSERA_DISABLE_GPU=1 $X --data-dir /tmp/tdh10 bench tpch --sf 10 --runs 3 --engine tessera --engine duckdb --json $OUT/tpch10-cpu.json --plot $OUT/tpch10-cpu.svg 2>&1 | grep -v '^\s*$'
    echo "== SSB SF20, TESSERA_DISABLE_GPU=1, tessera + duckdb"
    TESSERA_DISABLE_GPU=1 $X --data-dir /tmp/td20 bench ssb --sf 20 --runs 3 --engine tessera --engine duckdb --json $OUT/ssb20-cpu.json --plot $OUT/ssb20-cpu.svg 2>&1 | grep -v '^\s*$'
    ;;
  cpuanalyze)
    [ -d /tmp/tdh10/bench/tpch-sf10 ] || $X --data-dir /tmp/tdh10/bench/tpch-sf10 gen tpch --sf 10 --load 2>&1 | tail -1
    f=/tmp/cpuanalyze.sql; tpch_explain_sql $f 1 ${QUERIES:-$(cd benchmarks/tpch && ls q*.sql | sed 's/.sql//')}
    TESSERA_DISABLE_GPU=1 $X --format csv --data-dir /tmp/tdh10/bench/tpch-sf10 sql $f > $OUT/cpuanalyze.txt 2>&1
    grep -E "query:|rror" $OUT/cpuanalyze.txt
    ;;
  difftests)
    # Random-query runs, $SEEDS at once (default 8), each with its own seed and store
    # (GPU required), seeds $SEED0+1.. past the default (give each session's runs new
    # ones). With $DIFFTEST_BUDGET (seconds) set, batch after batch until the next would
    # not fit its $BATCH_SECONDS (default 200) in the budget; else one batch. Each run is
    # stopped after $DIFFTEST_SECONDS (default 500). The logs go into $OUT/difftests.tgz.
    batch=0; end=$((SECONDS + ${DIFFTEST_BUDGET:-0}))
    while :; do
      for s in $(seq 1 ${SEEDS:-8}); do
        seed=$((0x7e55e7a02026 + ${SEED0:-0} + batch * ${SEEDS:-8} + s))
        # The first $PACKED_SEEDS of a batch with packed columns (TESSERA_EXP_PACKED=1).
        # The next $NARROW_SEEDS with columns narrowed to byte widths (TESSERA_EXP_NARROW=1,
        # the default); the rest at their widths (TESSERA_EXP_NARROW=0).
        packed=0; [ $s -le ${PACKED_SEEDS:-0} ] && packed=1
        narrow=0; [ $packed = 0 ] && [ $s -le $((${PACKED_SEEDS:-0} + ${NARROW_SEEDS:-0})) ] && narrow=1
        TESSERA_EXP_PACKED=$packed TESSERA_EXP_NARROW=$narrow timeout ${DIFFTEST_SECONDS:-500} $X --data-dir /tmp/tdr$s difftest --require-gpu --seed $seed > $OUT/difftest-seed$seed.txt 2>&1 &
        [ $packed = 1 ] && echo "seed $seed: packed columns"
        [ $narrow = 1 ] && echo "seed $seed: narrowed columns"
      done
      wait
      rm -rf /tmp/tdr*/difftest-*
      batch=$((batch + 1))
      [ $((SECONDS + ${BATCH_SECONDS:-200})) -le $end ] || break
    done
    echo "== $batch batches of ${SEEDS:-8} seeds; cases finished (each line a case: its queries, GPU share, failures), mismatches"
    cat $OUT/difftest-seed*.txt | grep -E "^case " | awk '{for (i=1;i<NF;i++) if ($(i+1) ~ /^queries,?$/) q+=$i} END {print q " queries in finished cases"}'
    grep -hE "mismatch|MISMATCH|differ" $OUT/difftest-seed*.txt | grep -v " 0 mismatches" | head -40
    grep -h "queries, " $OUT/difftest-seed*.txt | grep -v "^case"
    tar -C $OUT -czf $OUT/difftests.tgz $(cd $OUT && ls difftest-seed*.txt) && rm -f $OUT/difftest-seed*.txt ;;
  esac
done
date -u
