#!/usr/bin/env bash
# The dev experiments prepared and not yet run, in one device call (no bundle needed). Run from the repo root on the
# device: OUT=$OUT bash cuda-native/dev/run_pending.sh
#   1. the NHWC row-ring depthwise variant (depthwise_conv3x3/run_variant.sh, README there): every element against
#      the shipped kernel on odd sizes and the sweep's stride-1 shapes, then shipped vs variant timed interleaved
#      (~1-3 minutes)
#   2. cheaper smooth activations for F16/BF16 outputs (depthwise_conv3x3/ab/run_fastact.sh, README there): the shipped
#      kernels against two header variants, every output checked against the exact rounding of its pre-activation,
#      timed interleaved (~2 minutes)
#   3. the gqa decode fixed-cost decomposition (gqa_decode/run_fixed_cost.sh, fixed_cost.cu): the shipped kernel after
#      the flush, with metadata warm, with K/V warm, next to an empty launch and a plain read; then ncu durations
#      (~1-2 minutes)
# Done and recorded: bmm_frag A/B and the carveout probe (dcc8ffc: bmm/results-h100-dcc8ffc-frag.txt,
# timing/h100-carveout-dcc8ffc.txt).
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-.}; mkdir -p "$OUT/depthwise" "$OUT/gqa"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
OUT=$OUT/depthwise timeout 400 bash "$here/depthwise_conv3x3/run_variant.sh"; echo "depthwise variant rc=$?"
grep -E "^SUMMARY|ODD" "$OUT/depthwise/variant.txt" 2>/dev/null
mkdir -p "$OUT/fastact"; OUT=$OUT/fastact timeout 300 bash "$here/depthwise_conv3x3/ab/run_fastact.sh"; echo "fastact rc=$?"
OUT=$OUT/gqa timeout 300 bash "$here/gqa_decode/run_fixed_cost.sh"; echo "gqa fixed cost rc=$?"
