#!/usr/bin/env bash
# Builds and runs the fixed-cost A/B (README.md): correctness grid, then timing; the short tables come last.
# From the repository root, on a machine with nvcc and a GPU:  OUT=/some/dir bash cuda-native/dev/gqa_decode/fixedcost/run.sh
# Writes $OUT/fixedcost.txt (everything printed), $OUT/ptxas.txt (registers/spills), $OUT/fixedcost_timing.csv,
# $OUT/fixedcost_wide.csv. Env: FLUSH=read flushes L2 by a read instead of a write; FC_TIMEOUT (s, default 300) bounds the run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$here/../../../src/main/cuda
common=$here/../../common
OUT=${OUT:-}
[ -n "$OUT" ] && mkdir -p "$OUT"
b=$(mktemp -d /tmp/gqa_fixedcost.XXXXXX)
# decode_fc.cu = the variants' base decode_mma.cu (sha1 14cc70ce5bd7) + decode_fc.patch (kept as a patch so the tree holds one
# copy of the kernel). Since the S2 ticket shipped (3e2769d), the base is the tree's file with unship_acqrel.patch
# applied (it also takes back the WARPS template parameter and the w8 d64 kernels, where the tree has them); A (shipped.cu)
# stays the tree's kernel, so A is now S2's code and S2/A measures run-to-run spread.
base="$src/gqa_decode/decode_mma.cu"
if [ "$(sha1sum "$base" | cut -c1-12)" != 14cc70ce5bd7 ]; then
  python3 "$here/../../common/apply_patch.py" "$base" "$here/unship_acqrel.patch" "$b/decode_mma_base.cu" || exit 3
  base="$b/decode_mma_base.cu"
fi
python3 "$here/../../common/apply_patch.py" "$base" "$here/decode_fc.patch" "$b/decode_fc.cu" || exit 3
F="-std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_80,code=sm_80"
nvcc $F -Xptxas -v -I"$src/common" -I"$src/gqa_decode" -c "$here/shipped.cu" -o "$b/ship.o" > "$b/ship.log" 2>&1 &
for v in 0 1 2 3 4 5 6; do
  nvcc $F -Xptxas -v -I"$b" -I"$src/common" -I"$src/gqa_decode" -DFC_V=$v -c "$here/variants.cu" -o "$b/v$v.o" > "$b/v$v.log" 2>&1 &
done
nvcc $F -I"$common" -c "$here/main.cu" -o "$b/main.o" > "$b/main.log" 2>&1 &
wait
for f in ship v0 v1 v2 v3 v4 v5 v6 main; do
  [ -f "$b/$f.o" ] || { echo "build of $f failed:"; cat "$b/$f.log"; exit 3; }
done
nvcc -gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_80,code=sm_80 "$b"/{main,ship,v0,v1,v2,v3,v4,v5,v6}.o -o "$b/fixedcost" || exit 3
# registers and spills per kernel and architecture
cat "$b"/ship.log "$b"/v[0-6].log | awk '
  /Compiling entry function/ { match($0, /function .[a-z0-9_]+/); k = substr($0, RSTART + 10, RLENGTH - 10); match($0, /sm_[0-9a]+/); a = substr($0, RSTART, RLENGTH) }
  /spill stores/ { sp = $5 "/" $9 }
  /Used [0-9]+ registers/ { match($0, /Used [0-9]+/); printf "%-26s %-7s %4s regs, spill st/ld %s B\n", k, a, substr($0, RSTART + 5, RLENGTH - 5), sp }' \
  | sort > "$b/ptxas.txt"
[ -n "$OUT" ] && cp "$b/ptxas.txt" "$OUT/ptxas.txt"
{
  echo "# fixedcost run $(date -u +%FT%TZ) on $(hostname); decode_mma.cu sha1 $(sha1sum "$src/gqa_decode/decode_mma.cu" | cut -c1-12);" \
       "git $(cd "$here" && git rev-parse --short HEAD 2>/dev/null || echo n/a); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  sha=$(sha1sum "$base" | cut -c1-12)
  [ "$sha" = 14cc70ce5bd7 ] || echo "# WARNING: the variants' base (sha1 $sha) is not the one decode_fc.cu was copied from (14cc70ce5bd7):" \
    "byte identity may fail for that reason"
  [ "$base" = "$src/gqa_decode/decode_mma.cu" ] || echo "# A is the tree's decode_mma.cu (sha1 $(sha1sum "$src/gqa_decode/decode_mma.cu" | cut -c1-12)," \
    "the S2 ticket shipped); the variants' base is it with unship_acqrel.patch applied"
  echo "# registers, sm_90a, F16 (BF16 the same; both architectures in ptxas.txt):"
  grep -E "_f16_d(64|128|256) +sm_90a" "$b/ptxas.txt" | awk '{printf "#   %s\n", $0}'
  grep -v "spill st/ld 0/0" "$b/ptxas.txt" | awk '{print "# SPILLS: " $0}'
} | tee ${OUT:+"$OUT/fixedcost.txt"}
timeout "${FC_TIMEOUT:-300}" "$b/fixedcost" 2>&1 | tee -a ${OUT:+"$OUT/fixedcost.txt"}
rc=${PIPESTATUS[0]}
echo "fixedcost exit $rc" | tee -a ${OUT:+"$OUT/fixedcost.txt"}
rm -rf "$b"
exit $rc
