#!/usr/bin/env bash
# Instruction counts of the row loops (sass_spec.cu specialisations: NONE=0, SILU=3, GELU_ERF=4, GELU_TANH=5; F16 stride 1)
# of the shipped NHWC and NCHW kernels and of the ring variant, from cuobjdump's SASS (sass_loops.py), plus
# ptxas registers. Needs nvcc and cuobjdump (CUOBJDUMP=/path if it is not on PATH); no GPU.
#   bash cuda-native/dev/depthwise_conv3x3/sass_count.sh
# The ring loop holds both row-parity bodies (taps and bias adds twice: 72 FFMA + 8 FADD per body), of which
# one iteration runs one: subtract ~82 from its static count for the dynamic one.
set -eu
D=$(cd "$(dirname "$0")" && pwd); S=$(cd "$D/../../src/main/cuda" && pwd); B=${BUILD_DIR:-/tmp/dw_sass}
CUOBJDUMP=${CUOBJDUMP:-cuobjdump}
mkdir -p "$B"
for k in NHWC NCHW RING; do
  nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -I "$D" -I "$S/common" -I "$S/depthwise_conv3x3" \
    -DSPEC_$k -c "$D/sass_spec.cu" -o "$B/spec_$k.o" 2> "$B/spec_$k.log"
  "$CUOBJDUMP" -sass "$B/spec_$k.o" > "$B/spec_$k.sass"
  for f in $(grep -o "Function : _Z[0-9]*spec_[a-z]*[^ ]*" "$B/spec_$k.sass" | awk '{print $3}'); do
    regs=$(awk -v f="$f" '$0 ~ "entry function .?" f {g = 1} g && /Used/ {print $5; exit}' "$B/spec_$k.log")
    echo "== $f ($regs registers)"
    python3 "$D/sass_loops.py" "$B/spec_$k.sass" "$f" | tail -n +2 | awk '/^loop/ && $4 > 60 {print; getline; print}'
  done
done
