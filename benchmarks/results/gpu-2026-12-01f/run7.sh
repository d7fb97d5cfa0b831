#!/usr/bin/env bash
# Run 7 of 2026-12-01f (pack of run 5 plus bit-packed columns packed group by group from
# each thread's buffer of distances, without the whole column's 32-bit distances first).
# GPU unit tests; SSB and TPC-H SF 1 answers, d and c; SSB SF 100: first queries in a new
# process, defaults and 'never', twice each (as runs 3 and 5), two traced first queries
# (as run 6), the 13 answers with the defaults against the CPU backend's. First, SSB SF 20's
# first queries in a new process, 3 rounds, on a machine that has done nothing else since
# the tests (run 5's followed the removal of the SF 100 store).
S=benchmarks/device/gpu-suite.sh
X=/tmp/tessera-gpu/bin/tessera
{ bash $S tests answers1; } 2>&1 | grep -vE "^(WARNING|ERROR).*(whl|pip|site)" > $OUT/log7-tests.txt
first() {  # $1: label, $2: store, $3: query file, $4: a SET line or empty
  local s="$(sed '/^--/d' $3 | tr '\n' ' ' | sed 's/;\s*$//')"
  /usr/bin/time -f "$1: process %e s" $X --data-dir $2 sql <( [ -n "$4" ] && echo "$4"; echo "$s;") > /dev/null 2>> $OUT/log7-first.txt
}
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u; } > $OUT/log7-first.txt
S20=/tmp/td20f; rm -rf $S20; $X --data-dir $S20 gen ssb --sf 20 --load > /dev/null 2>&1
for q in q1.1 q2.1 q3.1 q4.3; do first "warm-up SF20 $q" $S20 benchmarks/ssb/$q.sql ""; done
for r in 1 2 3; do for q in q1.1 q2.1 q3.1 q4.3; do first "SF20 $q round $r" $S20 benchmarks/ssb/$q.sql ""; done; done
rm -rf $S20
ST=/tmp/td100/bench/ssb-sf100
grep -q lineorder $ST/manifest.json 2>/dev/null || { rm -rf /tmp/td100; mkdir -p /tmp/td100/bench; /usr/bin/time -f "gen --load %e s" $X --data-dir $ST gen ssb --sf 100 --load > /dev/null 2>> $OUT/log7-first.txt; }
for q in q1.1 q3.1; do for m in auto never; do first "warm-up $m $q" $ST benchmarks/ssb/$q.sql "SET tessera.gpu_compact_tables = '$m';"; done; done
for r in 1 2; do for m in auto never; do for q in q1.1 q3.1; do
  first "SF100 $m $q round $r" $ST benchmarks/ssb/$q.sql "SET tessera.gpu_compact_tables = '$m';"
done; done; done
for r in 1 2; do
  TESSERA_TRACE_HOST=1 $X --data-dir /tmp/td100 bench ssb --sf 100 --runs 1 --engine tessera --queries q1.1 2>&1 | grep -E "^trace" | head -1 > $OUT/log7-trace-$r.txt
done
f=/tmp/all100.sql; : > $f
for p in benchmarks/ssb/q*.sql; do echo "$(sed '/^--/d' $p | tr '\n' ' ' | sed 's/;\s*$//');" >> $f; done
$X --format csv --data-dir $ST sql $f > /tmp/ssb100-d.out 2>&1
$X --format csv --data-dir $ST sql <(echo "SET tessera.device = 'cpu';"; cat $f) > /tmp/ssb100-cpu.out 2>&1
echo "== SSB SF100 d against the CPU backend: $(wc -l < /tmp/ssb100-cpu.out) lines, $(diff /tmp/ssb100-cpu.out /tmp/ssb100-d.out | grep -c '^[<>]') differ" >> $OUT/log7-first.txt
tail -8 $OUT/log7-tests.txt; cat $OUT/log7-first.txt
for r in 1 2; do tr ' ' '\n' < $OUT/log7-trace-$r.txt | grep -E "GPU pipeline|column|distances|packed|runs|found" | tail -16 | tr '\n' ' '; echo; done
date -u
