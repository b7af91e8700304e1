#!/usr/bin/env bash
# One device call for bmm_frag32 (bmm_frag.cu: F16/BF16 with m, n, k <= 32 loaded straight into mma fragments, 1, 2 or 4
# warps per matrix): build the harness, check every kernel on every corr case (frag32 on each shape with m, n, k <= 32:
# every layout, shared B, unaligned views, each warps-per-matrix count with a partial last block), then the n <= 32 part
# of the issue's sweep (cuBLAS, bmm_small, bmm_team's configurations and nine frag32 configurations interleaved), and
# the geomeans. Run from the repo root on the device: OUT=$OUT bash cuda-native/dev/bmm/run_frag32h.sh
set -o pipefail
OUT=${OUT:-.}; here=$(cd "$(dirname "$0")" && pwd); src=$here/../../src/main/cuda
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -I"$here" -I"$here/../common" -I"$src/common" -I"$src/bmm" "$here/bench_bmm.cu" -lcublas \
  -o /tmp/bench_bmm >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
BMM_SKIP=stream timeout 200 /tmp/bench_bmm corr >"$OUT/corr.txt" 2>&1; echo "corr rc=$?"
grep -m 20 -E "FAIL|MISMATCH|CUDA" "$OUT/corr.txt"; tail -1 "$OUT/corr.txt"
BMM_MAXN=32 BMM_SKIP=stream timeout 300 /tmp/bench_bmm sweep >"$OUT/sweep.txt" 2>&1; echo "sweep rc=$?"
grep -E "^frag (f16|bf16)|geomean|empty launch" "$OUT/sweep.txt"
