#!/usr/bin/env bash
# The split-K cluster merge A/B (cluster_ab.cu): skinny_mma.cu + cluster_merge.patch (the kernel as measured, not shipped). On an H100, from the repo root: OUT=$OUT bash cuda-native/dev/int8_mm/run_cluster_ab.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-.}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
python3 "$here/../common/apply_patch.py" "$here/../../src/main/cuda/int8_mm/skinny_mma.cu" "$here/cluster_merge.patch" /tmp/skinny_cl.cu || exit 3
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I"$here/../../src/main/cuda/common" -I"$here/../timing" \
  -I"$here/../../src/main/cuda/int8_mm" -DSKINNY_SRC='"/tmp/skinny_cl.cu"' -o /tmp/i8_cluster_ab "$here/cluster_ab.cu" -lcublasLt || exit 3
timeout ${CLUSTER_AB_TIMEOUT:-240} /tmp/i8_cluster_ab | tee "$OUT/int8_cluster_ab.txt"
exit ${PIPESTATUS[0]}
