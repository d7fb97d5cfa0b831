#!/usr/bin/env bash
# Run 6 of 2026-12-01e (pack C, the code as committed at the end). Random queries
# (`tessera difftest`, GPU against the CPU backend): 8 seeds at the defaults (4 narrowed
# to byte widths) and 8 with compact forms forced, 60 s each (seed offsets 11101–11108,
# 11201–11208); wall clock: SSB SF 20, 15 warm runs a process, 4 rounds, the defaults.
S=benchmarks/device/gpu-suite.sh
SEEDS=8 SEED0=11100 NARROW_SEEDS=4 DIFFTEST_SECONDS=60 bash $S difftests > $OUT/log6-difftests-default.txt 2>&1
mv $OUT/difftests.tgz $OUT/difftests-run6-default.tgz 2>/dev/null
TESSERA_EXP_NARROW_BITS=8 TESSERA_EXP_NARROW_RUNS=2 SEEDS=8 SEED0=11200 DIFFTEST_SECONDS=60 bash $S difftests > $OUT/log6-difftests-compact.txt 2>&1
mv $OUT/difftests.tgz $OUT/difftests-run6-compact.tgz 2>/dev/null
SETTINGS="d" ROUNDS=4 SF=20 bash $S turns 2>&1 | grep -vE "^(WARNING|ERROR).*(whl|pip|site)" > $OUT/log6-turns.txt
tar -C $OUT -czf $OUT/run6-json.tgz $(cd $OUT && ls turns-*.json) && rm -f $OUT/turns-*.json
for f in $OUT/log6-difftests-*.txt; do echo "== $f"; grep -vE "^(WARNING|ERROR)" $f | tail -3; done
tail -18 $OUT/log6-turns.txt
date -u
