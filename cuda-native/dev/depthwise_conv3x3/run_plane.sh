#!/usr/bin/env bash
# Builds and runs the whole-plane NCHW kernel check + timing (plane_main.cu) in one go:
#   OUT=$OUT bash cuda-native/dev/depthwise_conv3x3/run_plane.sh       # on the GPU host, from the repo root
#   bash cuda-native/dev/depthwise_conv3x3/run_plane.sh build          # compile only (no GPU needed)
# Both kernels come straight from src/main/cuda (k_plane.cu includes nchw_plane.cu, k_nchw.cu nchw.cu).
# Writes $OUT/plane.txt (the run) and $OUT/plane-regs.txt (ptxas registers and spills).
set -u
D=$(cd "$(dirname "$0")" && pwd); S=$(cd "$D/../../src/main/cuda" && pwd)
OUTD=${OUT:-/tmp}; B=${BUILD_DIR:-/tmp/dw_plane}
mkdir -p "$B" "$OUTD"
t0=$(date +%s)
F="-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I $D -I $D/../common -I $S/common -I $S/depthwise_conv3x3"
nvcc $F -Xptxas -v -c "$D/k_nchw.cu" -o "$B/k_nchw.o" > "$B/k_nchw.log" 2>&1 & p1=$!
nvcc $F -DPLANE_AB=${PLANE_AB:-0} --Werror all-warnings -Xptxas -v -c "$D/k_plane.cu" -o "$B/k_plane.o" > "$B/k_plane.log" 2>&1 & p2=$!
# PLANE_AB=1: also an earlier nchw_plane.cu (git revision PLANE_PREV, default a4aa713) with renamed entry points,
# timed as "prev" beside the current kernel (nchw_plane_prev.cu is generated here from git, so run it once where the
# checkout has its history and carry the file, or let the device copy of the tree take the generated file along)
AB=${PLANE_AB:-0}
if [ "$AB" = 1 ] && [ ! -f "$D/nchw_plane_prev.cu" ]; then
  git -C "$D" show "${PLANE_PREV:-a4aa713}:cuda-native/src/main/cuda/depthwise_conv3x3/nchw_plane.cu" \
    | sed 's/dwconv3x3_nchw_plane_/prev_nchw_plane_/g' > "$D/nchw_plane_prev.cu" || { echo "cannot generate nchw_plane_prev.cu"; exit 1; }
fi
nvcc $F -DPLANE_AB=$AB -DPLANE_GEO=${PLANE_GEO:-0} --Werror all-warnings -c "$D/plane_main.cu" -o "$B/main.o" > "$B/main.log" 2>&1 & p3=$!
pids="$p1 $p2 $p3"; objs="$B/k_nchw.o $B/k_plane.o $B/main.o"
if [ "$AB" = 1 ]; then
  for v in prev; do nvcc $F -Xptxas -v -c "$D/k_plane_$v.cu" -o "$B/k_plane_$v.o" > "$B/k_plane_$v.log" 2>&1 & pids="$pids $!"; objs="$objs $B/k_plane_$v.o"; done
fi
ok=1
for p in $pids; do wait $p || ok=0; done
[ $ok = 1 ] || { cat "$B"/*.log | grep -iE "error|warning" | head -30; echo "build failed"; exit 1; }
nvcc $objs -o "$B/dw_plane" || { echo "link failed"; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
awk -v q="'" '/Compiling entry function/ { split($0, a, q); k = a[2] } /spill stores/ { sp = $5 "/" $9 }
  /Used [0-9]+ registers/ { print k, "regs=" $5, "spill stores/loads=" sp }' "$B/k_plane.log" | grep plane > "$OUTD/plane-regs.txt"
[ "${1:-}" = build ] && exit 0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader 2>/dev/null
timeout ${PLANE_TIMEOUT:-240} "$B/dw_plane" 2>&1 | tee "$OUTD/plane.txt"
rc=${PIPESTATUS[0]}
echo "exit $rc, total $(( $(date +%s) - t0 )) s"
exit $rc
