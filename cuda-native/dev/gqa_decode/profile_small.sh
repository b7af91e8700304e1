#!/usr/bin/env bash
# ncu stall profile of the shipped decode kernel on the small problems whose fixed cost keeps issue 7's 3x target out
# of reach (docs/ops/gqa_decode.md, "The fixed cost, decomposed": 7-8 us beyond an empty launch even with K/V in L2).
# One device call, about a minute, from the repo root: OUT=$OUT bash cuda-native/dev/gqa_decode/profile_small.sh
# Builds fixed_cost.cu with -lineinfo and profiles, in its ncu mode, the decode launches of B=1 L=512 at the
# heuristic's 8 splits: fixed_cost.cu launches each configuration 19 times there (1 check + 6 rounds x 3 conditions),
# B=1 L=512 at 1 split comes first, so --launch-skip 19 --launch-count 4 is the 8-split check launch and three timed
# ones (ncu flushes the caches before each replay: all cold). Sections: launch, occupancy, warp state, scheduler,
# source counters (the top stall locations name the source lines), speed of light. Writes $OUT/gqa_small_ncu.txt.
set -u
here=$(cd "$(dirname "$0")" && pwd); src=$here/../../src/main/cuda
OUT=${OUT:-.}; mkdir -p "$OUT"
nvcc -std=c++17 -O3 -lineinfo -gencode=arch=compute_90a,code=sm_90a -I"$src/common" -I"$src/gqa_decode" -I"$here/../timing" \
  -o /tmp/gqa_fixed_li "$here/fixed_cost.cu" || exit 1
timeout 300 ncu --clock-control none -k regex:gqa_decode_mma --launch-skip 19 --launch-count 4 \
  --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats --section SourceCounters \
  --section SpeedOfLight /tmp/gqa_fixed_li ncu > "$OUT/gqa_small_ncu.txt" 2>&1
echo "ncu rc=$?"; grep -E "Grid Size|Duration|Stall|Warp Cycles Per Issued|Achieved Occupancy" "$OUT/gqa_small_ncu.txt" | head -80
