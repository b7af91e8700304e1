#!/usr/bin/env bash
# The staging A/B (stage_ab.cu): the tree's skinny_mma.cu against skinny_mma.cu at ALT (default 2b69676, the cp.async
# staging). Here, with git: `bash cuda-native/dev/int8_mm/run_stage_ab.sh alt` writes skinny_mma_alt.cu (its extern "C"
# symbols prefixed alt_; git-ignored, so name it in the device call's carry). On the GPU host, from the repo root:
#   OUT=$OUT bash cuda-native/dev/int8_mm/run_stage_ab.sh      (~45 s: build, checks, timing)
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" = alt ]; then
  git -C "$here" show "${ALT:-2b69676}:cuda-native/src/main/cuda/int8_mm/skinny_mma.cu" \
    | sed 's/int8_mm_skinny_m##TOKENS/alt_int8_mm_skinny_m##TOKENS/' > "$here/skinny_mma_alt.cu"
  grep -c alt_int8_mm_skinny "$here/skinny_mma_alt.cu"
  exit 0
fi
OUT=${OUT:-.}; mkdir -p "$OUT"
[ -f "$here/skinny_mma_alt.cu" ] || { echo "skinny_mma_alt.cu missing: run '$0 alt' where git is"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
inc="-I$here/../../src/main/cuda/common -I$here/../timing -I$here/../../src/main/cuda/int8_mm"
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a $inc -o /tmp/i8_stage_ab "$here/stage_ab.cu" "$here/skinny_mma_alt.cu" \
  -lcublasLt || exit 1
timeout ${STAGE_AB_TIMEOUT:-240} /tmp/i8_stage_ab | tee "$OUT/stage_ab.txt"
exit ${PIPESTATUS[0]}
