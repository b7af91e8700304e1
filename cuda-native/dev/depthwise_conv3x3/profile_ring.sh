#!/usr/bin/env bash
# ncu profile of the shipped NHWC ring kernel (profile_ring.cu): where its time goes at 55 % of the floor (docs/ops/
# depthwise_conv3x3.md, "Known limits"). One device call, under a minute, from the repo root:
#   OUT=$OUT bash cuda-native/dev/depthwise_conv3x3/profile_ring.sh
# Writes $OUT/ring_ncu.txt: per launch (NONE x3, SILU x3) the warp-state stall breakdown, scheduler issue rates,
# occupancy, memory throughput and instruction counts (ncu sections WarpStateStats, SchedulerStats, Occupancy,
# SpeedOfLight, MemoryWorkloadAnalysis, InstructionStats), clocks left alone.
set -u
D=$(cd "$(dirname "$0")" && pwd); S=$(cd "$D/../../src/main/cuda" && pwd); OUTD=${OUT:-/tmp}; mkdir -p "$OUTD"
F="-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -lineinfo -I $D -I $S/common -I $S/depthwise_conv3x3"
nvcc $F -o /tmp/dw_profile_ring "$D/profile_ring.cu" "$D/variant_nhwc_ring.cu" || { echo "build failed"; exit 1; }
/tmp/dw_profile_ring || exit 1
timeout 300 ncu --clock-control none -k regex:dwconv3x3_nhwc_ring_f16_s1 \
  --section WarpStateStats --section SchedulerStats --section Occupancy --section SpeedOfLight \
  --section MemoryWorkloadAnalysis --section InstructionStats /tmp/dw_profile_ring > "$OUTD/ring_ncu.txt" 2>&1
echo "ncu rc=$?"; grep -E "Duration|Stall|Issued Warp|Achieved Occupancy|DRAM Throughput|Executed Ipc" "$OUTD/ring_ncu.txt" | head -60
