#!/usr/bin/env bash
# The staging A/B (stage_ab.cu). Here, with git: `bash cuda-native/dev/int8_mm/run_stage_ab.sh prev` writes
# skinny_mma_prev.cu (skinny_mma.cu at PREV, default 1a6b21f, its extern "C" symbols prefixed prev_; git-ignored,
# carried to the GPU host as an untracked file of the tree). On the GPU host, from the repo root:
#   OUT=$OUT bash cuda-native/dev/int8_mm/run_stage_ab.sh      (~1-2 min: build ~40 s, run)
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" = prev ]; then
  git -C "$here" show "${PREV:-1a6b21f}:cuda-native/src/main/cuda/int8_mm/skinny_mma.cu" \
    | sed 's/int8_mm_skinny_m##TOKENS/prev_int8_mm_skinny_m##TOKENS/' > "$here/skinny_mma_prev.cu"
  grep -c prev_int8_mm_skinny "$here/skinny_mma_prev.cu"
  exit 0
fi
OUT=${OUT:-.}; mkdir -p "$OUT"
[ -f "$here/skinny_mma_prev.cu" ] || { echo "skinny_mma_prev.cu missing: run '$0 prev' where git is"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
inc="-I$here/../../src/main/cuda/common -I$here/../timing -I$here/../../src/main/cuda/int8_mm"
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a $inc -o /tmp/i8_stage_ab "$here/stage_ab.cu" "$here/skinny_mma_prev.cu" \
  -lcublasLt || exit 1
timeout ${STAGE_AB_TIMEOUT:-240} /tmp/i8_stage_ab | tee "$OUT/stage_ab.txt"
exit ${PIPESTATUS[0]}
