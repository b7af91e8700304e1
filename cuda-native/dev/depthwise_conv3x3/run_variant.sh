#!/usr/bin/env bash
# Builds and runs the NHWC row-ring variant check + timing (variant_main.cu, README.md) in one go:
#   OUT=$OUT bash cuda-native/dev/depthwise_conv3x3/run_variant.sh          # on the GPU host, from the repo root
#   bash cuda-native/dev/depthwise_conv3x3/run_variant.sh build             # compile only (no GPU needed)
# The shipped kernels come straight from src/main/cuda (k_nhwc.cu includes nhwc.cu, variant_nhwc_ring.cu nhwc_ring.cu);
# configurations 4-6 are nhwc_ring.cu of git revision RING_PREV (default c4fcc3c: the per-column epilogue), generated
# into nhwc_ring_prev.cu (git-ignored) on the first run: run "build" here first and carry that file to a GPU host.
# Writes $OUT/variant.txt (the run) and $OUT/regs.txt (ptxas registers and spills).
set -u
D=$(cd "$(dirname "$0")" && pwd); S=$(cd "$D/../../src/main/cuda" && pwd)
OUTD=${OUT:-/tmp}; B=${BUILD_DIR:-/tmp/dw_variant}
mkdir -p "$B" "$OUTD"
t0=$(date +%s)
F="-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I $D -I $S/common -I $S/depthwise_conv3x3"
nvcc $F -Xptxas -v -c "$D/k_nhwc.cu" -o "$B/k_nhwc.o" > "$B/k_nhwc.log" 2>&1 & p1=$!
nvcc $F --Werror all-warnings -Xptxas -v -c "$D/variant_nhwc_ring.cu" -o "$B/ring.o" > "$B/ring.log" 2>&1 & p2=$!
nvcc $F --Werror all-warnings -c "$D/variant_main.cu" -o "$B/main.o" > "$B/main.log" 2>&1 & p4=$!
if [ ! -f "$D/nhwc_ring_prev.cu" ]; then  # generate where git is, then carry it (it is git-ignored)
  git -C "$D" show "${RING_PREV:-c4fcc3c}:cuda-native/src/main/cuda/depthwise_conv3x3/nhwc_ring.cu" \
    | sed 's/dwconv3x3_nhwc_ring_/prev_nhwc_ring_/g' > "$D/nhwc_ring_prev.cu" || { echo "cannot generate nhwc_ring_prev.cu"; exit 1; }
fi
nvcc $F -Xptxas -v -c "$D/k_ring_prev.cu" -o "$B/prev.o" > "$B/prev.log" 2>&1 & p5=$!
ok=1
for p in $p1 $p2 $p4 $p5; do wait $p || ok=0; done
[ $ok = 1 ] || { cat "$B"/*.log | grep -iE "error|warning" | head -30; echo "build failed"; exit 1; }
nvcc "$B/k_nhwc.o" "$B/ring.o" "$B/prev.o" "$B/main.o" -o "$B/dw_variant" || { echo "link failed"; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
# registers / spills: the variant's kernels and the shipped F16/BF16 stride-1 NHWC kernels
cat "$B/ring.log" "$B/prev.log" "$B/k_nhwc.log" | awk -v q="'" '/Compiling entry function/ { split($0, a, q); k = a[2] }
  /spill stores/ { sp = $5 "/" $9 } /Used [0-9]+ registers/ { print k, "regs=" $5, "spill stores/loads=" sp }' \
  | grep -E "^(ring|prev_nhwc_ring_|dwconv3x3_nhwc_(ring_(c2w[24]_)?)?(f16|bf16)_s1 )" | tee "$OUTD/regs.txt"
[ "${1:-}" = build ] && exit 0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader 2>/dev/null
timeout ${VARIANT_TIMEOUT:-200} "$B/dw_variant" 2>&1 | tee "$OUTD/variant.txt"
rc=${PIPESTATUS[0]}
echo "exit $rc, total $(( $(date +%s) - t0 )) s"
exit $rc
