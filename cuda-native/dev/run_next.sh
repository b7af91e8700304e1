#!/usr/bin/env bash
# The dev measurements prepared for the next GPU session, in one device call (no bundle, ~2-3 minutes), from the
# repo root: OUT=$OUT bash cuda-native/dev/run_next.sh
#   1. depthwise_conv3x3/profile_ring.sh: ncu of the shipped NHWC ring kernel (why 0.55 of the floor with NONE when
#      the instruction count leaves room for 0.75)
#   2. gqa_decode/profile_small.sh: ncu stall profile of the decode kernel on the smallest problems (where the
#      7-8 us of dependent steps go)
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-.}; mkdir -p "$OUT/depthwise" "$OUT/gqa"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
OUT=$OUT/depthwise timeout 280 bash "$here/depthwise_conv3x3/profile_ring.sh"; echo "profile_ring rc=$?"
OUT=$OUT/gqa timeout 280 bash "$here/gqa_decode/profile_small.sh"; echo "profile_small rc=$?"
