#!/usr/bin/env bash
# One device call (~2 minutes, no bundle): what the split merge costs the small gqa launches, and the merge inside a
# thread-block cluster. Stage both here first, then carry them:
#   python3 cuda-native/dev/gqa_decode/ab/stage_merge_cost.py && python3 cuda-native/dev/gqa_decode/ab/stage_cluster.py
#   device: OUT=$OUT bash cuda-native/dev/gqa_decode/run_merge_ab.sh   with carry [".carry/gqa-merge", ".carry/gqa-cluster"]
# Writes $OUT/merge_cost.txt (A = B shipped, C no ticket or merge, D no merge traffic; C and D are wrong on purpose)
# and $OUT/cluster.txt (C = the cluster merge at A's splits, must be byte-identical to A; D the same at half the splits).
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
OUT=${OUT:-.}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
GQA_AB_D_SPLITS=same AB_TIMEOUT=200 bash "$root/.carry/gqa-merge/run.sh" "$root/.carry/gqa-merge" > "$OUT/merge_cost.txt" 2>&1
echo "merge cost: exit $?"; grep -E "^B=1 L=512|^B=1 L=2048|^B=4 L=2048 32/8 bhld |FAILED|ok:" "$OUT/merge_cost.txt" | head -12
AB_TIMEOUT=200 bash "$root/.carry/gqa-cluster/run.sh" "$root/.carry/gqa-cluster" > "$OUT/cluster.txt" 2>&1
echo "cluster: exit $?"; grep -E "^B=1 L=512|^B=1 L=2048|^B=4 L=2048 32/8 bhld |FAILED|ok:" "$OUT/cluster.txt" | head -12
