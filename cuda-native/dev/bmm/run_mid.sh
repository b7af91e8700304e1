#!/usr/bin/env bash
# Staged for the next device call (no bundle, about a minute): times bmm_team's configurations on F16/BF16 mid shapes
# whose plan (BmmHeuristics.teamPlan since 7666243) was never timed: u = ceil(m/32)·ceil(n/32) < 4 warp tiles, where the
# rule gives teams of 1-2 warps 3 stages (the 4de5ecd harness had w1 s3 slower than w1 s2 at 48³), beside u = 4 and 16
# rows as controls (BMM_SHAPES replaces the list). bench_bmm's sweep runs cuBLAS, bmm_small and around a dozen team configurations per row
# (the shipped one first), each checked. Run from the repo root on the device: OUT=$OUT bash cuda-native/dev/bmm/run_mid.sh
set -o pipefail
OUT=${OUT:-.}; here=$(cd "$(dirname "$0")" && pwd); src=$here/../../src/main/cuda
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -I"$here" -I"$here/../common" -I"$src/common" -I"$src/bmm" "$here/bench_bmm.cu" -lcublas \
  -o /tmp/bench_bmm >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
BMM_SHAPES="${BMM_SHAPES:-32x32x128,32x32x128@8192,32x64x96,64x32x64@8192,48x32x128,16x48x96,40x56x72,64x64x64,128x128x128}" BMM_SKIP=stream \
  timeout 300 /tmp/bench_bmm sweep >"$OUT/mid.txt" 2>&1; echo "sweep rc=$?"
cut -c1-400 "$OUT/mid.txt" | grep -E "^(f16|bf16) " | head -40
