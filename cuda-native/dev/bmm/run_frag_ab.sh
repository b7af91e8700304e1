#!/usr/bin/env bash
# One device call for frag_ab.cu (shipped bmm_frag / bmm_frag32 against four NN variants and cuBLAS, m, n, k <= 32):
# build with ptxas -v (register / spill summary), SASS counts where cuobjdump exists, --check-only under
# compute-sanitizer memcheck and racecheck, then the full run (corr suite with cuBLAS, every timed shape checked, the
# table and the geomeans). Run from the repo root on the GPU host:  OUT=$OUT bash cuda-native/dev/bmm/run_frag_ab.sh
# (about a minute; logs under $OUT). Exit status: 0 when every step passed.
set -o pipefail
OUT=${OUT:-.}; mkdir -p "$OUT"; here=$(cd "$(dirname "$0")" && pwd); src=$here/../../src/main/cuda
bin=/tmp/frag_ab_$$; rc=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1
echo "== build (sm_90a)"
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -I"$here/../common" -I"$src/common" -I"$src/bmm" \
  "$here/frag_ab.cu" -lcublas -o "$bin" >"$OUT/frag_ab-build.log" 2>&1 || { tail -40 "$OUT/frag_ab-build.log"; exit 1; }
# ptxas: one line per kernel the harness launches (NN entries and the variants): registers, spills.
awk '/Compiling entry function/ { f = $0; sub(/.*function .?/, "", f); sub(/.? for .*/, "", f) }
     /spill stores/ { sp = $0; sub(/.*frame, /, "", sp) }
     /Used [0-9]+ registers/ { r = $0; sub(/.*Used /, "", r); sub(/ registers.*/, "", r)
       if (f ~ /fab_kernel|_nn$|_nn_w[124]$/ && f !~ /f32/) {
         g = f; gsub(/_ZN6fragab10fab_kernelI/, "fab<", g); gsub(/EEEvPKT_S4_PS2_iiii/, ">", g)
         gsub(/13__nv_bfloat16/, "bf16,", g); gsub(/6__half/, "f16,", g); gsub(/Li|ELi|ELb/, " ", g)
         printf "  %-34s %3s regs  %s\n", g, r, sp } }' "$OUT/frag_ab-build.log"
nspill=$(grep "spill stores" "$OUT/frag_ab-build.log" | grep -vc "0 bytes spill stores, 0 bytes spill loads")
nwarn=$(grep -ci "warning" "$OUT/frag_ab-build.log")
echo "  ptxas: $nspill kernel(s) with spills, $nwarn warning line(s)   (fab<dt, S, WM, WN, KPERM, MPW>)"
if command -v cuobjdump >/dev/null; then
  echo "== SASS counts per kernel (LDG.128 / LDG.64 / LDG.32 / STG.128 / STG.64 / STG.32 / HMMA / MOVM)"
  cuobjdump -sass "$bin" 2>/dev/null | awk '
    /Function :/ { f = $3 }
    /LDG/ { if ($0 ~ /\.128/) l128[f]++; else if ($0 ~ /\.64/) l64[f]++; else l32[f]++ }
    /STG/ { if ($0 ~ /\.128/) s128[f]++; else if ($0 ~ /\.64/) s64[f]++; else s32[f]++ }
    /HMMA/ { h[f]++ } /MOVM/ { mv[f]++ }
    END { for (f in h) if (f ~ /fab_kernel|_nn$|_nn_w[24]$/) {
            g = f; gsub(/_ZN6fragab10fab_kernelI/, "fab<", g); gsub(/EEEvPKT_S4_PS2_iiii/, ">", g)
            gsub(/13__nv_bfloat16/, "bf16,", g); gsub(/6__half/, "f16,", g); gsub(/Li|ELi|ELb/, " ", g)
            printf "  %-34s %3d %3d %3d %3d %3d %3d %3d %3d\n", g, l128[f], l64[f], l32[f], s128[f], s64[f], s32[f], h[f], mv[f] } }' | sort
else
  echo "== cuobjdump not found: no SASS counts"
fi
# the table first (the point of the run), then the sanitizers, each under its own limit (the whole within a 600 s call)
echo "== full run"
timeout -k 10 240 "$bin" 2>&1 | tee "$OUT/frag_ab.txt"; r=${PIPESTATUS[0]}; echo "  rc=$r"; [ $r -ne 0 ] && rc=1
if command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool  frag_ab --check-only"
    timeout -k 10 120 compute-sanitizer --tool $tool --error-exitcode 86 "$bin" --check-only >"$OUT/frag_ab-$tool.txt" 2>&1; r=$?
    grep -E "^corr:|check-only|ERROR SUMMARY|RACECHECK SUMMARY|FAIL" "$OUT/frag_ab-$tool.txt" | head -12; echo "  rc=$r"
    [ $r -ne 0 ] && rc=1
  done
else
  echo "== compute-sanitizer not found: sanitizers skipped"; rc=1
fi
rm -f "$bin"
echo "run_frag_ab.sh: rc=$rc"
exit $rc
