#!/usr/bin/env bash
# The dev experiments prepared and not yet run, in one device call (about 3 minutes; no bundle needed):
#   1. bmm_frag against bmm_small and cuBLAS (bmm/run_frag.sh): corr on every frag shape, then the n <= 32 sweep
#   2. the shared-memory carveout probe (timing/carveout.cu): does a flush kernel with no shared memory cost the
#      kernels with large shared memory that follow it?
# Run from the repo root on the device: OUT=$OUT bash cuda-native/dev/run_pending.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-.}; mkdir -p "$OUT/frag"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
nvcc -std=c++17 -O3 -arch=sm_90 -o /tmp/carveout "$here/timing/carveout.cu" && timeout 60 /tmp/carveout > "$OUT/carveout.txt" 2>&1
echo "carveout rc=$?"; cat "$OUT/carveout.txt"
OUT=$OUT/frag timeout 420 bash "$here/bmm/run_frag.sh"; echo "frag rc=$?"
