#!/usr/bin/env bash
# One device call for the F32 frag experiment (bmm_frag_f32_nn_s<S>_w<MPW> in bmm_frag.cu: m, n, k <= 16 read from
# global memory straight into registers, exact in-order FFMA): build the harness, check every kernel on every corr
# case (F32 frag on each shape with m, n, k <= 16 as stored, shared B, unaligned views, each matrices-per-warp
# count), then the n <= 16 part of the issue's sweep plus F32 odd shapes (cuBLAS, bmm_small and every frag
# configuration interleaved), and the geomeans.
# Run from the repo root on the device: OUT=$OUT bash cuda-native/dev/bmm/run_frag32.sh  (24 s on the H100)
set -o pipefail
OUT=${OUT:-.}; here=$(cd "$(dirname "$0")" && pwd); src=$here/../../src/main/cuda
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -I"$here" -I"$here/../common" -I"$src/common" -I"$src/bmm" "$here/bench_bmm.cu" -lcublas \
  -o /tmp/bench_bmm >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
grep -A2 "bmm_frag_f32_nn" "$OUT/build.log" | grep -o "Compiling entry function '[a-z0-9_]*'\|Used [0-9]* registers" | paste - - | head -6
BMM_SKIP=stream,team timeout 150 /tmp/bench_bmm corr >"$OUT/corr.txt" 2>&1; echo "corr rc=$?"
grep -m 20 -E "FAIL|MISMATCH|CUDA" "$OUT/corr.txt"; tail -1 "$OUT/corr.txt"
BMM_MAXN=16 BMM_SKIP=stream,team timeout 240 /tmp/bench_bmm sweep >"$OUT/sweep.txt" 2>&1; echo "sweep rc=$?"
grep -E "^frag|geomean|empty launch" "$OUT/sweep.txt"
