#!/usr/bin/env bash
# Builds the depthwise fatbins of a variant for sweep_ab.sh: the tree's cuda-native sources with <patch> applied to
# common/depthwise_conv3x3.cuh (a unified diff of that one file, e.g. f32_act_grouped.patch), compiled by
# build-fatbins.sh into <out> (default .carry/dw-alt, git-ignored; name it in the device call's carry). Run here,
# where nvcc is, from the repository root; then on the GPU host:
#   BENCH_ARGS="--dtype F32" bash cuda-native/dev/depthwise_conv3x3/sweep_ab.sh .carry/dw-alt
# (A = the bundle of the clean commit, B = this variant). Prints the registers and spills that changed.
set -euo pipefail
patch=${1:?unified diff of common/depthwise_conv3x3.cuh}
out=${2:-.carry/dw-alt}
root=$(pwd)
src=$root/cuda-native/src/main/cuda
tmp=$(mktemp -d /tmp/dw-alt.XXXXXX)
mkdir -p "$tmp/src"
cp -r "$src/common" "$src/depthwise_conv3x3" "$tmp/src/"
python3 "$root/cuda-native/dev/common/apply_patch.py" "$src/common/depthwise_conv3x3.cuh" "$patch" "$tmp/src/common/depthwise_conv3x3.cuh"
bash "$root/cuda-native/build-fatbins.sh" "$tmp/src" "$tmp/out" "$tmp/logs" > /dev/null
rm -rf "$out"; mkdir -p "$out"
cp "$tmp"/out/depthwise_conv3x3/*.fatbin "$out/"
for f in "$tmp"/logs/*.log; do
  base=$root/cuda-native/target/ptxas/$(basename "$f")
  [ -f "$base" ] || continue
  diff <(grep -E "Compiling entry|registers|spill" "$base") <(grep -E "Compiling entry|registers|spill" "$f") > /dev/null ||
    echo "ptxas output differs from the tree's build: $(basename "$f") (compare $base and $f)"
done
echo "variant fatbins in $out: $(ls "$out" | tr '\n' ' ')"
