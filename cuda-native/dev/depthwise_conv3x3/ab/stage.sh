#!/usr/bin/env bash
# Stages an A/B timing of two versions of the depthwise epilogue header (common/depthwise_conv3x3.cuh):
# A = the header at git revision $1 (default HEAD), B = the working tree's (header and kernels edited by the sed script $3 if given), each compiled with the shipped
# kernels and the harness launchers (k_nchw.cu, k_nhwc.cu) into its own translation unit, A's symbols
# renamed a_*, so one binary times both interleaved. Run on the GPU host: bash <dir>/run.sh <dir>.
#   bash cuda-native/dev/depthwise_conv3x3/ab/stage.sh [rev] [dir] [sed script making B]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); src=$here/../../../src/main/cuda
rev=${1:-HEAD}; dst=${2:-$here/../../../../.carry/dw-ab}; bsed=${3:-}
mkdir -p "$dst/a" "$dst/b"
for v in a b; do
  cp "$src"/depthwise_conv3x3/{nchw,nhwc}.cu "$src"/common/gapfill_types.cuh "$here"/../{k_nchw.cu,k_nhwc.cu,harness.h} "$dst/$v/"
  cp "$src"/common/depthwise_conv3x3.cuh "$dst/$v/"
done
for f in "$here"/*.cuh; do [ -e "$f" ] && cp "$f" "$dst/b/"; done  # headers a sed script makes B include (dwconv_fastact.cuh)
[ -n "$bsed" ] && sed -E -i -f "$bsed" "$dst"/b/{depthwise_conv3x3.cuh,nchw.cu,nhwc.cu}  # B's header and kernels
if git -C "$here" rev-parse --git-dir > /dev/null 2>&1; then  # a copy without .git (the GPU host's): A = the tree's header
  git -C "$here" show "$rev:cuda-native/src/main/cuda/common/depthwise_conv3x3.cuh" > "$dst/a/depthwise_conv3x3.cuh"
else rev=worktree; fi
sed -i -E 's/\b(dwconv3x3_|alt[012]|nchw_launch|nhwc_launch|nhwc_cpt|nhwc_wc|old_launch)/a_\1/g' "$dst"/a/{nchw.cu,nhwc.cu,k_nchw.cu,k_nhwc.cu,harness.h}
cp "$here"/{main.cu,ab_common.h,run.sh} "$dst/"
echo "A = $rev ($(git -C "$here" rev-parse --short "$rev" 2> /dev/null || echo "no git")), B = working tree${bsed:+ + $bsed}; staged into $dst"
