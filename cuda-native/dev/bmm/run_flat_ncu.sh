#!/usr/bin/env bash
# ncu of the team kernels (twenty-seventh session): why rows of 8-byte multiples sit at 50-70 % of the copy floor
# where 16-byte rows reach 81-91 %. One launch each, caches flushed by ncu, clocks untouched.
set -o pipefail
OUT=${OUT:-.}; here=$(cd "$(dirname "$0")" && pwd); src=$here/../../src/main/cuda
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -lineinfo -I"$here" -I"$here/../common" -I"$src/common" -I"$src/bmm" "$here/bench_bmm.cu" -lcublas \
  -o /tmp/bench_bmm >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
prof() {  # name shape only kernel-regex
  BMM_SHAPES=$2 BMM_ONLY="$3" BMM_SKIP=stream,frag timeout 120 ncu --clock-control none --kernel-name "regex:$4" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats \
    /tmp/bench_bmm sweep >"$OUT/ncu-$1.txt" 2>&1; echo "$1 rc=$?"
}
prof team8f-100 100x100x100 "team8f w8 g1 s1 dc" "bmm_team8f_f16_nn"
prof team8-100 100x100x100 "team8 w8 g1 s2 dc" "bmm_team8_f16_nn"
prof team-96 96x96x96 "team w8 g1 s2 sc" "bmm_team_f16_nn"
prof team-128 128x128x128 "team w8 g1 s2 sc" "bmm_team_f16_nn"
prof team8f-68 68x68x68 "team8f w8 g1 s1 sc" "bmm_team8f_f16_nn"
for f in "$OUT"/ncu-*.txt; do echo "== $f"; grep -E "Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Issued Ipc|No Eligible|Warp Cycles Per Issued|Block Limit|Theoretical Occ|Stall|L1/TEX Hit|Mem Busy|Max Bandwidth" "$f" | head -30; done
