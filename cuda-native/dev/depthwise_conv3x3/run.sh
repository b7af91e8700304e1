#!/usr/bin/env bash
# Device-side driver of the harness: build, locate cuDNN, check SASS for 128-bit accesses, run.
# Usage (from the repo root): bash <dir>/run.sh <dir>   (dir holds harness.cu, the kernels and headers)
set -u
D=${1:?dir}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader
ls /usr/include/cudnn*.h /usr/local/cuda/include/cudnn*.h 2>/dev/null | head -2
LIB=$(ldconfig -p 2>/dev/null | grep -o '/[^ ]*libcudnn\.so\.9$' | head -1)
[ -z "$LIB" ] && LIB=$(find /usr /opt /root -name 'libcudnn.so.9' 2>/dev/null | head -1)
echo "libcudnn: ${LIB:-none}"
[ -n "$LIB" ] && export LD_LIBRARY_PATH=$(dirname "$LIB"):${LD_LIBRARY_PATH:-}
t0=$(date +%s)
nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -I "$D" "$D/harness.cu" -o /tmp/dwh -ldl -lgomp || exit 1
echo "build $(( $(date +%s) - t0 )) s"
cuobjdump -sass /tmp/dwh > /tmp/dwh.sass 2>/dev/null && for k in nhwc_f16_s1 nhwc_f32_s1 nchw_f16_s1 nchw_bf16_s2; do
  echo "SASS dwconv3x3_$k: LDG.128 $(awk "/Function : dwconv3x3_$k\$/{f=1;next} /Function :/{f=0} f" /tmp/dwh.sass | grep -c 'LDG.E.128') STG.128 $(awk "/Function : dwconv3x3_$k\$/{f=1;next} /Function :/{f=0} f" /tmp/dwh.sass | grep -c 'STG.E.*128')"
done
timeout 195 /tmp/dwh
echo "exit $?"
