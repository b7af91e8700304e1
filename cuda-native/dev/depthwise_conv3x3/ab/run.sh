#!/usr/bin/env bash
# Builds and runs the staged A/B epilogue timing (see stage.sh). Usage: bash <dir>/run.sh <dir>
set -u
D=${1:?dir}
F="-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a"
nvcc $F -I "$D/a" -c "$D/a/k_nchw.cu" -o /tmp/ab_a_nchw.o & p1=$!
nvcc $F -I "$D/a" -c "$D/a/k_nhwc.cu" -o /tmp/ab_a_nhwc.o & p2=$!
nvcc $F -I "$D/b" -c "$D/b/k_nchw.cu" -o /tmp/ab_b_nchw.o & p3=$!
nvcc $F -I "$D/b" -c "$D/b/k_nhwc.cu" -o /tmp/ab_b_nhwc.o & p4=$!
nvcc $F -I "$D/b" -c "$D/main.cu" -o /tmp/ab_main.o & p5=$!
for p in $p1 $p2 $p3 $p4 $p5; do wait $p || { echo "build failed"; exit 1; }; done
nvcc /tmp/ab_*.o -o /tmp/dw_ab || exit 1
timeout ${AB_TIMEOUT:-120} /tmp/dw_ab
echo "exit $?"
