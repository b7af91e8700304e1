#!/usr/bin/env bash
# Builds and runs the staged paged-cache A/B (stage_paged.py). Usage on the GPU host: bash <dir>/run.sh <dir>
set -u
D=${1:?dir}
F="-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v"
for v in a b c d; do nvcc $F -I "$D/$v" -I "$D" -c "$D/$v.cu" -o /tmp/gqa_pg_$v.o > /tmp/gqa_pg_$v.log 2>&1 & done
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I "$D" -c "$D/main64.cu" -o /tmp/gqa_pg_main.o || exit 1
wait
for v in a b c d; do grep -q "error" /tmp/gqa_pg_$v.log && { cat /tmp/gqa_pg_$v.log; exit 1; }
  echo "$v: $(grep -A3 "entry function '${v}_gqa_decode_mma_f16_d64'" /tmp/gqa_pg_$v.log | grep -o "Used [0-9]* registers" | head -1)"; done
nvcc -gencode=arch=compute_90a,code=sm_90a /tmp/gqa_pg_*.o -o /tmp/gqa_pg || exit 1
timeout ${PG_TIMEOUT:-200} /tmp/gqa_pg
echo "exit $?"
