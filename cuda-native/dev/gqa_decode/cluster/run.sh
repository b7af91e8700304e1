#!/usr/bin/env bash
# Builds and runs cluster_ab.cu (the cluster merge A/B of gqa_decode, header of that file). From the repository root on
# an H100 (compute capability 9.0): OUT=$OUT bash cuda-native/dev/gqa_decode/cluster/run.sh   (~20 s build, ~1-2 min run)
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$here/../../../src/main/cuda
OUT=${OUT:-.}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -I"$src/common" -I"$src/gqa_decode" -I"$here/../../common" \
  -o /tmp/cluster_ab "$here/cluster_ab.cu" > "$OUT/cluster_build.log" 2>&1 || { tail -20 "$OUT/cluster_build.log"; exit 3; }
timeout ${CLUSTER_TIMEOUT:-300} /tmp/cluster_ab | tee "$OUT/cluster_ab.txt"
exit ${PIPESTATUS[0]}
