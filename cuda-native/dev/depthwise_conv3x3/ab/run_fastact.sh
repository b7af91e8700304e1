#!/usr/bin/env bash
# The fast smooth activations (README "Cheaper smooth activations"), from the repo root:
#   OUT=$OUT bash cuda-native/dev/depthwise_conv3x3/ab/run_fastact.sh         # GPU host: stage, build, check, time (~2 min)
#   bash cuda-native/dev/depthwise_conv3x3/ab/run_fastact.sh build            # no GPU: stage + build only, registers
#   bash cuda-native/dev/depthwise_conv3x3/ab/run_fastact.sh check            # no GPU: fastact_check.cpp (g++, ~1 min)
#   CUOBJDUMP=/path/cuobjdump bash .../ab/run_fastact.sh sass                 # no GPU: SASS instructions per output
# Stages A = the shipped header (HEAD, or the tree's where there is no .git), B = variant_fastact.sed and
# B2 = variant_fastact_cap.sed (stage.sh; B2's symbols renamed c_*), builds them into one binary with
# main_fastact.cu and runs it: every output of A, B and B2 checked against the exact rounding of its fp32
# pre-activation, then timed interleaved. Writes $OUT/fastact.txt and $OUT/regs.txt.
set -u
H=$(cd "$(dirname "$0")" && pwd); D=${FASTACT_DIR:-/tmp/dw_fastact}; OUTD=${OUT:-/tmp}
mkdir -p "$OUTD"
if [ "${1:-}" = check ]; then
  g++ -std=c++17 -O2 -pthread -ffp-contract=off -Wall -Wextra -I "$H/../../../src/main/cuda/common" "$H/fastact_check.cpp" -o /tmp/fastact_check && /tmp/fastact_check
  exit $?
fi
echo "run_fastact.sh: the A/B ran at a91ff10 (h100-a91ff10-fastact.txt) and variant B shipped as"
echo "src/main/cuda/common/fast_smooth_act.cuh; the staging edits the header as it was then: check out a91ff10 to rerun it."
echo "'check' still runs the CPU check of the shipped forms."
exit 2
t0=$(date +%s)
rm -rf "$D" "$D.cap"
bash "$H/stage.sh" HEAD "$D" "$H/variant_fastact.sed" || exit 1
bash "$H/stage.sh" HEAD "$D.cap" "$H/variant_fastact_cap.sed" > /dev/null || exit 1
mv "$D.cap/b" "$D/c" && rm -rf "$D.cap"
sed -i -E 's/\b(dwconv3x3_|alt[012]|nchw_launch|nhwc_launch|nhwc_cpt|nhwc_wc|old_launch)/c_\1/g' "$D"/c/{nchw.cu,nhwc.cu,k_nchw.cu,k_nhwc.cu,harness.h}
cp "$H/main_fastact.cu" "$H/exact16.h" "$H/ab_common.h" "$D/"
F="-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a --Werror all-warnings"
if [ "${1:-}" = sass ]; then  # the row loops of ../sass_spec.cu (F16 s1, activation fixed) against each header
  for v in a b c; do for k in NHWC NCHW; do
    nvcc $F -Xptxas -v -I "$D/$v" -DSPEC_$k -c "$H/../sass_spec.cu" -o "$D/spec_${v}_$k.o" 2> "$D/spec_${v}_$k.log" &
  done; done; wait
  for v in a b c; do for k in NHWC NCHW; do
    "${CUOBJDUMP:-cuobjdump}" -sass "$D/spec_${v}_$k.o" > "$D/spec_${v}_$k.sass" || exit 1
    python3 "$H/sass_fastact.py" "$D/spec_${v}_$k.sass" $(echo $v | tr abc 'AB2' | sed 's/2/B2/')
  done; done | sort -k2,2 -k3,3 -k4,4 -k1,1
  exit 0
fi
p=""
for v in a b c; do for k in nchw nhwc; do
  nvcc $F -Xptxas -v -I "$D/$v" -c "$D/$v/k_$k.cu" -o "$D/${v}_$k.o" > "$D/${v}_$k.log" 2>&1 & p="$p $!"
done; done
nvcc $F -I "$D/b" -c "$D/main_fastact.cu" -o "$D/main.o" > "$D/main.log" 2>&1 & p="$p $!"
ok=1; for q in $p; do wait $q || ok=0; done
[ $ok = 1 ] || { grep -iE "error|warning" "$D"/*.log | head -30; echo "build failed"; exit 1; }
nvcc "$D"/{a,b,c}_n*.o "$D/main.o" -o "$D/dw_fastact" || { echo "link failed"; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
cat "$D"/{a,b,c}_n*.log | awk -v q="'" '/Compiling entry function/ { split($0, a, q); k = a[2] }
  /spill stores/ { sp = $5 "/" $9 } /Used [0-9]+ registers/ { v = k ~ /^a_/ ? "A " : k ~ /^c_/ ? "B2" : "B ";
  sub(/^[ac]_/, "", k); print v, k, "regs=" $5, "spill stores/loads=" sp }' \
  | grep -E " dwconv3x3_(nhwc_(f16|bf16)_s1|nchw_(f16|bf16)_s1_v[28]) " | sort -k2,2 -k1,1 | tee "$OUTD/regs.txt"
[ "${1:-}" = build ] && exit 0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>/dev/null
timeout ${FASTACT_TIMEOUT:-150} "$D/dw_fastact" 2>&1 | tee "$OUTD/fastact.txt"
rc=${PIPESTATUS[0]}
echo "exit $rc, total $(( $(date +%s) - t0 )) s"
exit $rc
