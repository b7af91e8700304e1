#!/usr/bin/env bash
# Device-side driver of the harness: build, full sweep, then a memcheck pass on a small set. Logs to $OUT.
set -u
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
t0=$(date +%s)
nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -I . harness.cu -lcublasLt -lcublas -o /tmp/int8mm_harness > "$OUT/build.log" 2>&1
[ -x /tmp/int8mm_harness ] || { echo "build failed"; tail -30 "$OUT/build.log"; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"
OMP_NUM_THREADS=16 timeout 150 /tmp/int8mm_harness ${1:-full} > "$OUT/harness.log" 2>&1; echo "harness rc=$? after $(( $(date +%s) - t0 )) s"
grep -E "^FAIL|^vendor: no|^correctness|^copy|^device|TOTAL" "$OUT/harness.log" | head -40
sed -n '/I32 summary/,/TOTAL/p' "$OUT/harness.log"
left=$(( 270 - ($(date +%s) - t0) ))
if [ $left -gt 20 ]; then
  timeout $left compute-sanitizer --tool memcheck --print-limit 5 /tmp/int8mm_harness sanitize > "$OUT/memcheck.log" 2>&1; echo "memcheck rc=$?"; tail -3 "$OUT/memcheck.log"
fi
