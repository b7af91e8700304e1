#!/usr/bin/env bash
# Builds and runs nchw_u3_ab.cu (the stride-1 NCHW row loop, rolled as shipped against unrolled by three) on a GPU host,
# from the repository root: bash cuda-native/dev/depthwise_conv3x3/nchw_u3_ab.sh [reps]. Writes $OUT/nchw_u3_ab.txt.
set -u
D=$(cd "$(dirname "$0")" && pwd); S=$(cd "$D/../../src/main/cuda" && pwd)
OUTD=${OUT:-/tmp}; mkdir -p "$OUTD"
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -I "$D" -I "$S/common" -I "$S/depthwise_conv3x3" \
  "$D/nchw_u3_ab.cu" -o /tmp/nchw_u3_ab > /tmp/nchw_u3_ab.log 2>&1 || { cat /tmp/nchw_u3_ab.log; exit 1; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  awk -v q="'" '/Compiling entry function/ { split($0, a, q); k = a[2] } /Used [0-9]+ registers/ { print k, "regs=" $5 }' \
    /tmp/nchw_u3_ab.log | grep -E "^dwconv3x3_nchw_(f16|bf16)_s1_v8(_u3)? "
  if command -v cuobjdump > /dev/null; then
    cuobjdump -sass /tmp/nchw_u3_ab > /tmp/nchw_u3_ab.sass 2>/dev/null
    for k in dwconv3x3_nchw_f16_s1_v8 dwconv3x3_nchw_f16_s1_v8_u3; do
      awk "/Function : $k\$/{f=1;next} /Function :/{f=0} f" /tmp/nchw_u3_ab.sass > /tmp/k.sass
      echo "SASS $k: $(grep -cE '^ +/\*[0-9a-f]{4}\*/' /tmp/k.sass) instructions, MOV $(grep -cE '\bMOV\b' /tmp/k.sass), FFMA $(grep -c FFMA /tmp/k.sass)"
    done
  fi
  timeout 200 /tmp/nchw_u3_ab "${1:-30}"
  echo "exit $?"
} 2>&1 | tee "$OUTD/nchw_u3_ab.txt"
