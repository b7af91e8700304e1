#!/usr/bin/env bash
# Twenty-seventh session: the flat loader (bmm_team_flat.cu, kind "team8f") against bmm_team8 and cuBLAS on rows of
# 8-byte multiples. Builds the harness, checks every flat configuration on every layout (BMM_FLAT_CORR), then times
# the sweep rows. From the repo root on the device: OUT=$OUT bash cuda-native/dev/bmm/run_flat.sh
set -o pipefail
OUT=${OUT:-.}; here=$(cd "$(dirname "$0")" && pwd); src=$here/../../src/main/cuda
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -I"$here" -I"$here/../common" -I"$src/common" -I"$src/bmm" "$here/bench_bmm.cu" -lcublas \
  -o /tmp/bench_bmm >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
BMM_FLAT_CORR=1 timeout 200 /tmp/bench_bmm corr >"$OUT/flat-corr.txt" 2>&1; echo "corr rc=$?"; tail -3 "$OUT/flat-corr.txt"
BMM_SHAPES="${BMM_SHAPES:-100x100x100,100x100x100@8192,100x100x100@512,60x60x60,76x76x76,92x92x92,124x124x124,36x44x52,100x100x36,68x68x68}" \
  BMM_SKIP=stream,frag timeout 300 /tmp/bench_bmm sweep >"$OUT/flat-sweep.txt" 2>&1; echo "sweep rc=$?"
grep -E "^(f16|bf16) " "$OUT/flat-sweep.txt" | cut -c1-200 | tail -24
