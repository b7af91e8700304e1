#!/usr/bin/env bash
# Stages the harness, the shipped kernel sources and their headers into one flat directory (default
# .carry/depthwise_conv3x3, git-ignored) that run.sh builds on the GPU host:
#   bash cuda-native/dev/depthwise_conv3x3/stage.sh && bash .carry/depthwise_conv3x3/run.sh .carry/depthwise_conv3x3 [ncu]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); src=$here/../../src/main/cuda
dst=${1:-.carry/depthwise_conv3x3}
mkdir -p "$dst"
cp "$here"/{harness.cu,harness.h,k_old.cu,k_nchw.cu,k_nhwc.cu,run.sh} "$dst"/
# the previous kernels, from git, with their symbols renamed old_* (k_old.cu times them side by side)
old=69a26a8
for l in nchw nhwc; do
  git -C "$here" show "$old:cuda-native/src/main/cuda/depthwise_conv3x3/$l.cu" | sed "s/\bdwconv3x3_${l}_/old_dwconv3x3_${l}_/g" > "$dst/old_$l.cu"
done
cp "$src"/depthwise_conv3x3/{nchw,nhwc,vendor_gelu}.cu "$src"/common/{depthwise_conv3x3.cuh,gapfill_types.cuh} "$dst"/
echo "staged into $dst"
