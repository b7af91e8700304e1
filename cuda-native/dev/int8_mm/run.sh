#!/usr/bin/env bash
# Device-side driver of the harness. Assemble one directory first (run 2 used /work/main/.carry/int8_mm):
#   cp cuda-native/dev/int8_mm/{harness.cu,stream_mma.cu,run.sh} cuda-native/src/main/cuda/int8_mm/{skinny_mma.cu,dequant.cu} \
#      cuda-native/src/main/cuda/harness/l2_flush.cu cuda-native/src/main/cuda/common/{int8_mm.cuh,gapfill_types.cuh} DIR/
# then on the GPU host: timeout 230 bash DIR/run.sh   (run 2: 100 s wall on an H100, log h100-harness-run2.log)
# build, a short ncu profile of the old and new kernel at M=1 K=N=4096, the full correctness + timing sweep,
# then a memcheck pass on a small set. Logs go to $OUT.
set -u
cd "$(dirname "$0")"
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -I . harness.cu -lcublasLt -lcublas -o /tmp/int8mm_harness > "$OUT/build.log" 2>&1
[ -x /tmp/int8mm_harness ] || { echo "build failed"; tail -30 "$OUT/build.log"; exit 1; }
echo "built at $(el) s"
M="gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size,launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,launch__registers_per_thread,lts__t_bytes.sum"
timeout 45 ncu --clock-control none --metrics "$M" -k regex:'skinny|stream' /tmp/int8mm_harness profile > "$OUT/ncu.log" 2>&1
echo "ncu rc=$? at $(el) s"
grep -E "int8_mm_|duration|dram__|warps_active|grid_size|block_size|limit_|registers_per|lts__t_bytes" "$OUT/ncu.log" | awk '{$1=$1};1' | head -26
OMP_NUM_THREADS=16 timeout ${HARNESS_S:-135} /tmp/int8mm_harness full > "$OUT/harness.log" 2>&1; echo "harness rc=$? at $(el) s"
grep -E "^FAIL|^vendor: no|^correctness|^copy|^device|TOTAL" "$OUT/harness.log" | head -20
left=$(( ${TOTAL_S:-225} - $(el) ))
if [ $left -gt 25 ]; then
  OMP_NUM_THREADS=16 timeout $(( left - 5 )) compute-sanitizer --tool memcheck --print-limit 5 /tmp/int8mm_harness sanitize > "$OUT/memcheck.log" 2>&1; echo "memcheck rc=$? at $(el) s"; tail -2 "$OUT/memcheck.log"
fi
sed -n '/^M    K/,$p' "$OUT/harness.log"
