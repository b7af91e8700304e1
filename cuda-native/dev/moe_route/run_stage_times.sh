#!/usr/bin/env bash
# Builds and runs stage_times.cu (about 20 s on an H100); writes $OUT/moe_route_stage_times.txt.
# Usage (device, repo root): OUT=$OUT bash cuda-native/dev/moe_route/run_stage_times.sh
set -u
here=$(cd "$(dirname "$0")" && pwd); src=$here/../../src/main/cuda
OUT=${OUT:-.}; mkdir -p "$OUT"
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I"$src/common" -I"$src/moe_route" -I"$here/../timing" \
  -o /tmp/moe_stage_times "$here/stage_times.cu" || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader | tee "$OUT/moe_route_stage_times.txt"
timeout 120 /tmp/moe_stage_times | tee -a "$OUT/moe_route_stage_times.txt"
