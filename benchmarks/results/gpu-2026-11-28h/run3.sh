#!/usr/bin/env bash
# Run 3 of 2026-11-28h, run 1's pack: gpu-suite.sh's `ab` section as changed this session
# (settings alternating which runs first, JSON pooled by ab_json.py), checked on the device
# with AB=TESSERA_EXP_INDEX32=0, 2 rounds, 5 warm SSB runs. Its log did not come back (a
# run returns at most 8 files): log3-ab.txt is ab_json.py over the JSON (run3-json.tgz)
# made here, beside the SF1 answers' lines quoted in the README.
mkdir -p $OUT; AB=TESSERA_EXP_INDEX32=0 ROUNDS=2 SSB_RUNS=5 bash benchmarks/device/gpu-suite.sh ab > $OUT/log3-ab.txt 2>&1; tail -45 $OUT/log3-ab.txt; ls $OUT
