#!/usr/bin/env bash
# One device call (about a minute), from the repo root: OUT=$OUT bash cuda-native/dev/timing/run_code_fetch.sh
# Builds and runs code_fetch.cu (cold code vs warm code, straight-line kernels and the gqa decode), then ncu's stall
# reasons (per warp, % of active cycles) of the first, cold decode launch, and the decode kernel's SASS.
set -u
here=$(cd "$(dirname "$0")" && pwd); src=$here/../../src/main/cuda
OUT=${OUT:-.}; mkdir -p "$OUT"
nvcc -std=c++17 -O3 -lineinfo -gencode=arch=compute_90a,code=sm_90a -I"$src/common" -I"$src/gqa_decode" -I"$here" \
  -o /tmp/code_fetch "$here/code_fetch.cu" || exit 1
timeout 200 /tmp/code_fetch | tee "$OUT/code_fetch.txt"; rc=${PIPESTATUS[0]}
timeout 120 ncu --clock-control none -k regex:gqa_decode_mma --launch-count 1 \
  --metrics 'regex:smsp__warp_issue_stalled_.*_per_warp_active\.pct,smsp__inst_executed.sum,sm__cycles_active.avg,gpu__time_duration.sum' \
  /tmp/code_fetch > "$OUT/code_fetch_ncu.txt" 2>&1
echo "ncu rc=$?"; grep -E "stalled|inst_executed|cycles_active|duration" "$OUT/code_fetch_ncu.txt" | sort -k3 -n -r | head -30
cuobjdump -sass -fun gqa_decode_mma_f16_d128 /tmp/code_fetch > "$OUT/decode_d128.sass" 2>&1 || echo "cuobjdump failed"
grep -cE '^\s+/\*[0-9a-f]{4}\*/' "$OUT/decode_d128.sass"
exit $rc
