#!/usr/bin/env bash
# Where the T = 1 decode rows lose time: ncu (--clock-control none) of the shipped w64s6 and w64 at E=64 T=1 and T=8
# and E=128 (the harness's --profile cases, GG_MOES 0,1), with the spread of active cycles across SMs (min / avg / max: a tail of slow SMs
# shows as max well above avg) and DRAM throughput. Builds like run.sh; needs the kernel sources in ./cuda.
set -u
cd "$(dirname "$0")"
OUT=${OUT:-out}; mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
bash ./build.sh || exit 1
echo "built in ${SECONDS}s"
GG_VARS=${GG_VARS:-w64s6,w64} GG_MOES=${GG_MOES:-0,1} timeout ${NCU_S:-120} ncu --clock-control none -k regex:gg_w64 --metrics \
gpu__time_duration.sum,sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,launch__grid_size,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_wait_per_warp_active.pct \
  ./gg --profile > "$OUT/ncu-tail.txt" 2>&1
echo "ncu rc $? at ${SECONDS}s"
grep -E "gg_w64|duration|cycles|dram__|grid_size|stalled" "$OUT/ncu-tail.txt" | sed 's/  */ /g' | head -150
