#!/usr/bin/env bash
# Run 7 of 2026-12-01e (pack C): run 6's random queries again, 95 s a seed (at 60 s no
# case had finished), seed offsets 11301–11308 (4 narrowed to byte widths) and
# 11401–11408 (compact forms forced).
S=benchmarks/device/gpu-suite.sh; SEEDS=8 SEED0=11300 NARROW_SEEDS=4 DIFFTEST_SECONDS=95 bash $S difftests > $OUT/log7-difftests-default.txt 2>&1; mv $OUT/difftests.tgz $OUT/difftests-run7-default.tgz; TESSERA_EXP_NARROW_BITS=8 TESSERA_EXP_NARROW_RUNS=2 SEEDS=8 SEED0=11400 DIFFTEST_SECONDS=95 bash $S difftests > $OUT/log7-difftests-compact.txt 2>&1; mv $OUT/difftests.tgz $OUT/difftests-run7-compact.tgz; for f in $OUT/log7-*.txt; do echo "== $f"; grep -vE "^(WARNING|ERROR)" $f | tail -3; done
