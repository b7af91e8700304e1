#!/usr/bin/env bash
# One device call (2-4 minutes): the tile-load addressing change of decode_mma.cu, checked then timed.
#   here, first:  python3 cuda-native/dev/gqa_decode/ab/stage_issue.py     (A = HEAD's kernel, B/C/D = working tree)
#   device:       OUT=$OUT bash cuda-native/dev/gqa_decode/run_issue_ab.sh   with carry [".carry/gqa-issue"]
# 1. harness.cu's correctness part on the working-tree kernel (every D, G, layout, page 4's per-row lookups, graph
#    replay; fp64 reference, poisoned outputs); the run is cut once its timing parts start.
# 2. ab/main.cu: A vs B/C/D byte for byte (NaN in every cache row past each length), then timed interleaved.
set -u
here=$(cd "$(dirname "$0")" && pwd); src=$here/../../src/main/cuda; root=$(cd "$here/../../.." && pwd)
OUT=${OUT:-.}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I"$here" -I"$src/gqa_decode" -I"$src/common" \
  -o /tmp/gqa_harness "$here/harness.cu" -lcublas || exit 1
timeout 100 /tmp/gqa_harness quick > "$OUT/harness.txt" 2>&1
grep -E "FAIL|correctness:|layouts|graph|replay" "$OUT/harness.txt" | head -20
bash "$root/.carry/gqa-issue/run.sh" "$root/.carry/gqa-issue" 2>&1 | tee "$OUT/issue_ab.txt" | tail -60
