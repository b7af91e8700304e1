#!/usr/bin/env bash
# Builds and runs a staged A/B/C/D (ab/stage*.py, paged/stage_paged.py). Usage on the GPU host: bash <dir>/run.sh <dir>
set -u
D=${1:?dir}
K=$(cat "$D/kernel" 2>/dev/null || echo f16_d128)  # the timed kernel, gqa_decode_mma_<K> of each variant
F="-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v"
for v in a b c d; do nvcc $F -I "$D/$v" -I "$D" -c "$D/$v.cu" -o /tmp/gqa_ab_$v.o > /tmp/gqa_ab_$v.log 2>&1 & done
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I "$D" -c "$D/main.cu" -o /tmp/gqa_ab_main.o || exit 1
wait
for v in a b c d; do grep -q "error" /tmp/gqa_ab_$v.log && { cat /tmp/gqa_ab_$v.log; exit 1; }
  echo "$v: $(grep -A3 "entry function '${v}_gqa_decode_mma_$K'" /tmp/gqa_ab_$v.log | grep -o "Used [0-9]* registers" | head -1)"; done
nvcc -gencode=arch=compute_90a,code=sm_90a /tmp/gqa_ab_*.o -o /tmp/gqa_ab || exit 1
timeout ${AB_TIMEOUT:-200} /tmp/gqa_ab
echo "exit $?"
