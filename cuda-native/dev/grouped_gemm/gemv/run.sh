#!/usr/bin/env bash
# Device run of the staged decode experiment (gemv_kn.cu: part A, the read rate of 128-byte .. 4 KB strips; part B,
# the wide split-K decode tile, checked against a CPU fp64 reference and timed against the floor). About 40 s.
# Run from the repository root: OUT=$OUT bash cuda-native/dev/grouped_gemm/gemv/run.sh
set -u
here=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-.}
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -o /tmp/gemv_kn "$here/gemv_kn.cu" > "$OUT/gemv-build.log" 2>&1 \
  || { tail -30 "$OUT/gemv-build.log"; exit 1; }
grep -A2 "gemv_kn" "$OUT/gemv-build.log" | grep -o "Used [0-9]* registers.*" | sort -u
timeout 240 /tmp/gemv_kn > "$OUT/gemv.txt" 2>&1; echo "gemv_kn rc=$?"
cat "$OUT/gemv.txt"
