#!/usr/bin/env bash
# Run 6 of 2026-11-29b, the second call (after run6-prep.sh): the pack of 4d14b7d + the
# bench change (d) against `tessera` built at 0f1942e (o), through gpu-suite.sh's new
# `turns` section: SSB SF 20, 15 warm runs, 16 rounds, the order rotating by round.
mkdir -p /tmp/t6
OUT=/tmp/t6 SETTINGS="d o" BIN_o=/tmp/old-tessera ROUNDS=16 bash benchmarks/device/gpu-suite.sh turns > $OUT/log6-turns.txt 2>&1
grep -vE "^(ERROR|WARNING)|pip|nvidia-smi: command" $OUT/log6-turns.txt | tail -24
tar -C /tmp -czf $OUT/run6-json.tgz t6
