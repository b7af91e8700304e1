#!/usr/bin/env bash
# One device call: build the harness (sm_90a), check bmm_team on the corr cases, then the n <= 128 sweep
# (cuBLAS, bmm_small, bmm_stream default plan, bmm_team default plan and alternatives), read-based L2 flush.
# Run from a folder holding bench_bmm.cu, bmm_small.cu, bmm_stream.cu, bmm_team.cu, bmm_mma.cuh, bmm_ffma.cuh and
# gapfill_types.cuh, dev_harness.h (copies of cuda-native/dev/bmm, dev/common and src/main/cuda/{bmm,common}).
set -o pipefail
OUT=${OUT:-.}
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -I. bench_bmm.cu -lcublas -o bench >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
echo "spilling functions: $(grep -cE '[1-9][0-9]* bytes spill' "$OUT/build.log")"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
BMM_SKIP=small,stream timeout 70 ./bench corr >"$OUT/corr.txt" 2>&1; echo "corr rc=$?"
grep -m 20 -E "FAIL|MISMATCH|CUDA" "$OUT/corr.txt"; tail -2 "$OUT/corr.txt"
./bench sweep >"$OUT/sweep.txt" 2>&1; echo "sweep rc=$?"
head -6 "$OUT/sweep.txt"
grep -A200 '^SUMMARY' "$OUT/sweep.txt" | cut -c1-150
