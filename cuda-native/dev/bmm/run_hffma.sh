#!/usr/bin/env bash
# One device call for the hffma experiment (bmm_small_hffma.cu): build the harness, check bmm_small and bmm_hffma on
# every corr case (321 cases, every layout, shared B, unaligned views), then the n <= 32 part of the issue's sweep
# (cuBLAS, bmm_small, bmm_hffma, bmm_team and its alternatives interleaved) and the geomean with and without hffma.
# Run from the repo root on the device: OUT=$OUT bash cuda-native/dev/bmm/run_hffma.sh
set -o pipefail
OUT=${OUT:-.}; here=$(cd "$(dirname "$0")" && pwd); src=$here/../../src/main/cuda
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -I"$here" -I"$src/common" -I"$src/bmm" "$here/bench_bmm.cu" -lcublas \
  -o /tmp/bench_bmm >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
grep -A2 "bmm_hffma_f16_nn\|bmm_small_f16_nn" "$OUT/build.log" | grep -o "Used [0-9]* registers.*" | head -2
BMM_SKIP=stream,team timeout 120 /tmp/bench_bmm corr >"$OUT/corr.txt" 2>&1; echo "corr rc=$?"
grep -m 20 -E "FAIL|MISMATCH|CUDA" "$OUT/corr.txt"; tail -1 "$OUT/corr.txt"
BMM_MAXN=32 BMM_SKIP=stream timeout 240 /tmp/bench_bmm sweep >"$OUT/sweep.txt" 2>&1; echo "sweep rc=$?"
grep -E "^hffma|geomean" "$OUT/sweep.txt"
