#!/usr/bin/env bash
# One device call (~1-2 minutes), from the repo root: OUT=$OUT bash cuda-native/dev/int8_mm/run_split_sweep.sh
# SWEEP=<name> runs <name>.cu instead (the same build, its own output file; prefetch_sweep.cu is in git at b0ba2fb).
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-.}; mkdir -p "$OUT"
SWEEP=${SWEEP:-split_sweep}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I"$here/../../src/main/cuda/common" -I"$here/../timing" \
  -o /tmp/i8_$SWEEP "$here/$SWEEP.cu" || exit 1
timeout ${SWEEP_TIMEOUT:-300} /tmp/i8_$SWEEP | tee "$OUT/$SWEEP.txt"
