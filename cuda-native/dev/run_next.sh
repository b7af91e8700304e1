#!/usr/bin/env bash
# Two ncu profiles in one device call (no bundle, under a minute), from the repo root: OUT=$OUT bash cuda-native/dev/run_next.sh
#   1. depthwise_conv3x3/profile_ring.sh: ncu of the shipped NHWC ring kernel
#   2. gqa_decode/profile_small.sh: ncu of the decode kernel on the smallest problems
# Ran at af8bb1d (eighth session): depthwise_conv3x3/h100-af8bb1d-ring-ncu.txt (issue-bound at 2 blocks per SM, 0.52
# issue efficiency) and gqa_decode/h100-af8bb1d-small-ncu.txt (one warp per scheduler, a dependent chain); what
# followed is in docs/ops/depthwise_conv3x3.md and docs/ops/gqa_decode.md (eighth-session sections).
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-.}; mkdir -p "$OUT/depthwise" "$OUT/gqa"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
OUT=$OUT/depthwise timeout 280 bash "$here/depthwise_conv3x3/profile_ring.sh"; echo "profile_ring rc=$?"
OUT=$OUT/gqa timeout 280 bash "$here/gqa_decode/profile_small.sh"; echo "profile_small rc=$?"
