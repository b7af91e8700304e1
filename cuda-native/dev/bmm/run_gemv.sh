#!/usr/bin/env bash
# One device call for bmm_gemv.cu (bmm with m = 1 or n = 1): build the harness gemv_ab.cu, check every kernel on
# every layout (F32 bit for bit against the in-order fmaf sum), then time cuBLAS against the planned kernel.
# Run from the repo root on the device: OUT=$OUT bash cuda-native/dev/bmm/run_gemv.sh  (under a minute). Results:
# results-h100-gemv.txt (the experiment form of the harness: warp, flat and depth variants, since dropped) and
# results-h100-gemv-forms.txt (the axpy warp kernel in its shipped and first-measured loop forms, v_axpy_warp_old).
set -o pipefail
OUT=${OUT:-.}; here=$(cd "$(dirname "$0")" && pwd); src=$here/../../src/main/cuda
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -I"$here/../common" -I"$src/common" -I"$src/bmm" "$here/gemv_ab.cu" -lcublas \
  -o /tmp/gemv_ab >"$OUT/gemv-build.log" 2>&1 || { tail -40 "$OUT/gemv-build.log"; exit 1; }
timeout 200 /tmp/gemv_ab 2>&1 | tee "$OUT/gemv.txt"; echo "gemv rc=$?"
