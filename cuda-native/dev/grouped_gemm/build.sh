#!/usr/bin/env bash
# Builds the harness binary ./gg (kernels.cu and harness.cu in parallel, sm_90a), for run.sh and ncu_tail.sh; needs the
# kernel sources in ./cuda. Run from this folder.
export PATH=/usr/local/cuda/bin:$PATH
ARCH="-gencode=arch=compute_90a,code=sm_90a"
nvcc -std=c++17 -O3 $ARCH -I cuda -I cuda/common -c kernels.cu -o k.o & p1=$!
nvcc -std=c++17 -O3 $ARCH -c harness.cu -o h.o & p2=$!
wait $p1 && wait $p2 || { echo "build failed"; exit 1; }
nvcc $ARCH k.o h.o -L/usr/local/cuda/lib64 -lcublas -o gg || exit 1
