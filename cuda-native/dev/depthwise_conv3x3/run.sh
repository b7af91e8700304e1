#!/usr/bin/env bash
# Device-side driver of the harness: build the four translation units in parallel, report registers,
# run the harness (odd-shape sweep + timed sweep), optionally ncu one f16 case per layout.
# Usage (from the repo root): bash <dir>/run.sh <dir> [ncu]   (dir holds the harness, kernels and headers, flat)
set -u
D=${1:?dir}
OUTD=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader
LIB=$(ldconfig -p 2>/dev/null | grep -o '/[^ ]*libcudnn\.so\.9$' | head -1)
[ -z "$LIB" ] && LIB=$(find /usr /opt /root -name 'libcudnn.so.9' 2>/dev/null | head -1)
echo "libcudnn: ${LIB:-none}"
[ -n "$LIB" ] && export LD_LIBRARY_PATH=$(dirname "$LIB"):${LD_LIBRARY_PATH:-}
t0=$(date +%s)
F="-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xcompiler -fopenmp -I $D"
pids=()
for u in k_old k_nchw k_nhwc harness; do
  nvcc $F -Xptxas -v -c "$D/$u.cu" -o /tmp/$u.o > /tmp/$u.log 2>&1 & pids+=($!)
done
for p in "${pids[@]}"; do wait $p || { cat /tmp/*.log | grep -i error; echo "build failed"; exit 1; }; done
nvcc -Xcompiler -fopenmp /tmp/k_old.o /tmp/k_nchw.o /tmp/k_nhwc.o /tmp/harness.o -o /tmp/dwh -ldl -lgomp || exit 1
echo "build $(( $(date +%s) - t0 )) s"
cat /tmp/k_*.log | grep -E "Compiling entry|Used|spill" | paste - - - | sed -E "s/ptxas info *: Compiling entry function '//; s/' for 'sm_90a'//; s/ptxas info *://g; s/bytes stack frame, //; s/ bytes spill stores, / /; s/bytes spill loads//; s/used 0 barriers//" | awk '{printf "%s regs=%s stack/spill=%s/%s/%s\n",$1,$6,$2,$3,$4}' > $OUTD/regs.txt
grep -E "dwconv3x3_(nchw_f16_s1_v8|nhwc_f16_s1|nhwc_f32_s1|nchw_f32_s1_v4)|alt._f16_s1" $OUTD/regs.txt
cuobjdump -sass /tmp/dwh > /tmp/dwh.sass 2>/dev/null && for k in dwconv3x3_nhwc_f16_s1 dwconv3x3_nhwc_f32_s1 dwconv3x3_nchw_f16_s1_v8 dwconv3x3_nchw_f16_s2_v8; do
  a=$(awk "/Function : $k\$/{f=1;next} /Function :/{f=0} f" /tmp/dwh.sass)
  echo "SASS $k: LDG.64 $(grep -c 'LDG.E.64' <<<"$a") LDG.128 $(grep -c 'LDG.E.128' <<<"$a") STG $(grep -c 'STG' <<<"$a") LDL/STL $(grep -cE 'LDL|STL' <<<"$a") SHFL $(grep -c SHFL <<<"$a")"
done
if [ "${2:-}" = ncu ] && command -v ncu >/dev/null; then
  timeout 60 ncu --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
     --section MemoryWorkloadAnalysis -k regex:dwconv3x3 /tmp/dwh prof > $OUTD/ncu.txt 2>&1
  echo "ncu exit $?"
  grep -E "dwconv3x3_|DRAM Throughput|Memory Throughput|Duration|Achieved Occupancy|Registers Per|Issue Slots Busy|Compute \(SM\) Throughput|L1/TEX Hit|L2 Hit|Stall|One or More" $OUTD/ncu.txt | grep -v "^ *-" | cut -c1-150 | head -80
fi
timeout ${HARNESS_TIMEOUT:-170} /tmp/dwh 2>&1 | tee $OUTD/harness.txt | grep -vE "^ ?[0-9]+, ?[0-9]+,.* old " 
echo "exit ${PIPESTATUS[0]}"
