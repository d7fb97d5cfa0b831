#!/usr/bin/env bash
# Run 5 of 2026-12-01f (pack of the host conversions made faster: distances read in
# place from integer, date and dictionary arrays; bit-packing a stream's words in a
# register; runs laid out without branching on where they start). GPU unit tests (the
# GPU's readers of bit-packed columns and runs checked against these packers among
# them); SSB and TPC-H SF 1 answers, d and c; SSB SF 100: first queries in a new process,
# defaults and 'never', twice each (as run 3), one traced first query (as run 4), the 13
# answers with the defaults against the CPU backend's; SSB SF 20 and TPC-H SF 10 first
# queries in a new process (the defaults), twice each.
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
{ bash $S tests answers1; } 2>&1 | grep -vE "^(WARNING|ERROR).*(whl|pip|site)" > $OUT/log5-tests.txt
first() {  # $1: label, $2: store, $3: query file, $4: a SET line or empty
  local s="$(sed '/^--/d' $3 | tr '\n' ' ' | sed 's/;\s*$//')"
  /usr/bin/time -f "$1: process %e s" $X --data-dir $2 sql <( [ -n "$4" ] && echo "$4"; echo "$s;") > /dev/null 2>> $OUT/log5-first.txt
}
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } > $OUT/log5-first.txt
ST=/tmp/td100/bench/ssb-sf100
grep -q lineorder $ST/manifest.json 2>/dev/null || { rm -rf /tmp/td100; mkdir -p /tmp/td100/bench; /usr/bin/time -f "gen --load %e s" $X --data-dir $ST gen ssb --sf 100 --load > /dev/null 2>> $OUT/log5-first.txt; }
for q in q1.1 q3.1; do for m in auto never; do first "warm-up $m $q" $ST benchmarks/ssb/$q.sql "SET tessera.gpu_compact_tables = '$m';"; done; done
for r in 1 2; do for m in auto never; do for q in q1.1 q3.1; do
  first "SF100 $m $q round $r" $ST benchmarks/ssb/$q.sql "SET tessera.gpu_compact_tables = '$m';"
done; done; done
TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td100 bench ssb --sf 100 --runs 1 --engine tessera --queries q1.1 2>&1 | grep -E "^trace|^│ q1.1" | head -1 | cut -c1-3000 >> $OUT/log5-first.txt
f=/tmp/all100.sql; : > $f
for p in benchmarks/ssb/q*.sql; do echo "$(sed '/^--/d' $p | tr '\n' ' ' | sed 's/;\s*$//');" >> $f; done
$X --format csv --data-dir $ST sql $f > /tmp/ssb100-d.out 2>&1
$X --format csv --data-dir $ST sql <(echo "SET tessera.device = 'cpu';"; cat $f) > /tmp/ssb100-cpu.out 2>&1
echo "== SSB SF100 d against the CPU backend: $(wc -l < /tmp/ssb100-cpu.out) lines, $(diff /tmp/ssb100-cpu.out /tmp/ssb100-d.out | grep -c '^[<>]') differ" >> $OUT/log5-first.txt
rm -rf /tmp/td100
S20=/tmp/td20f; rm -rf $S20; $X --data-dir $S20 gen ssb --sf 20 --load > /dev/null 2>&1
for q in q1.1 q3.1; do first "warm-up SF20 $q" $S20 benchmarks/ssb/$q.sql ""; done
for r in 1 2; do for q in q1.1 q2.1 q3.1 q4.3; do first "SF20 $q round $r" $S20 benchmarks/ssb/$q.sql ""; done; done
rm -rf $S20
T10=/tmp/tdt10f; rm -rf $T10; $X --data-dir $T10 gen tpch --sf 10 --load > /dev/null 2>&1
first "warm-up TPC-H SF10 q01" $T10 benchmarks/tpch/q01.sql ""
for r in 1 2; do first "TPC-H SF10 q01 round $r" $T10 benchmarks/tpch/q01.sql ""; done
rm -rf $T10
tail -8 $OUT/log5-tests.txt; cat $OUT/log5-first.txt | cut -c1-400
date -u
