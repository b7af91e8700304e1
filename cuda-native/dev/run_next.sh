#!/usr/bin/env bash
# Staged for the next session with device time (no bundle, about two minutes), from the repo root:
#   OUT=$OUT bash cuda-native/dev/run_next.sh
# grouped_gemm/gemv/run.sh: is the 128-byte strip the limit of the T = 1 grouped-GEMM rows? Part A times a plain read
# of 64 MB as strips of 128 B .. 4 KB; part B checks and times a wide split-K decode tile (docs/ops/grouped_gemm.md,
# "A wide decode tile"). Ran at 199face (fourteenth session): grouped_gemm/gemv/h100-199face.txt, negative.
# gqa_decode/ab/stage_pdl.py: the split merge as a programmatic dependent launch against the shipped in-kernel merge
# (docs/ops/gqa_decode.md), staged on the device into /tmp/gqa-pdl. Ran at 199face: gqa_decode/ab/h100-199face-pdl.txt,
# negative (the second launch costs more than the fused merge).
# (Before this, the script ran the eighth session's two ncu profiles, depthwise_conv3x3/profile_ring.sh and
# gqa_decode/profile_small.sh, at af8bb1d; their results are in those folders and docs/ops/.)
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-.}; mkdir -p "$OUT/gemv"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
OUT=$OUT/gemv timeout 300 bash "$here/grouped_gemm/gemv/run.sh"; echo "gemv rc=$?"
python3 "$here/gqa_decode/ab/stage_pdl.py" /tmp/gqa-pdl && GQA_AB_D_SPLITS=same timeout 200 bash /tmp/gqa-pdl/run.sh /tmp/gqa-pdl \
  > "$OUT/gqa-pdl.txt" 2>&1; echo "gqa-pdl rc=$?"; tail -40 "$OUT/gqa-pdl.txt"
