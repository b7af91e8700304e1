#!/usr/bin/env bash
# Device run of the grouped GEMM harness: build (kernels.cu and harness.cu in parallel, sm_90a), profile the
# decode kernels with ncu at E=64 T=1 and T=8, then correctness + the sweep. Needs the kernel sources in
# ./cuda (cuda-native/src/main/cuda copied next to this script). Results in $OUT (or ./out).
set -u
cd "$(dirname "$0")"
OUT=${OUT:-out}; mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
bash ./build.sh || exit 1
echo "built in ${SECONDS}s"
[ "${NCU_S:-50}" = 0 ] || timeout ${NCU_S:-50} ncu --clock-control none -k regex:gg_ --metrics \
gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__occupancy_limit_shared_mem,launch__registers_per_thread,lts__t_sector_hit_rate.pct \
  ./gg --profile > "$OUT/ncu.txt" 2>&1
echo "ncu rc $? at ${SECONDS}s"
grep -E "gg_|duration|dram__|warps_active|grid_size|hit_rate|profiled" "$OUT/ncu.txt" | sed 's/  */ /g' | head -120 > "$OUT/ncu_short.txt"
timeout ${SWEEP_S:-165} ./gg "$@" > "$OUT/sweep.txt" 2>&1
echo "sweep rc $? at ${SECONDS}s"
