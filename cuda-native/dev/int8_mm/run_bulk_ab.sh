#!/usr/bin/env bash
# The bulk-copy A/B (bulk_ab.cu): build (-Xptxas -v), ptxas figures and SASS counts of the bulk kernels (UBLKCP/UTMALDG =
# bulk copies, SYNCS = mbarrier ops, LDSM, IMMA, local ld/st), the checks + timing table, then --check-only (K = 2048,
# N = 5632, every M) plain (60 s limit: catches a hang early), the table, then --check-only under compute-sanitizer
# memcheck and racecheck. Worst case about 30 + 60 + 150 + 2 x 120 s. On the GPU host, from the repo root:
#   bash cuda-native/dev/int8_mm/run_bulk_ab.sh        (OUT=dir keeps the logs; default /tmp/bulk_ab_out)
# Exit status: the table run's (1 on any output mismatch).
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/bulk_ab_out}; mkdir -p "$OUT"
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
export PATH="$PATH:/usr/local/cuda/bin"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
inc="-I$here/../../src/main/cuda/common -I$here/../timing -I$here/../../src/main/cuda/int8_mm"
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xcompiler -march=native $inc -Xptxas -v -o /tmp/bulk_ab "$here/bulk_ab.cu" -lcublasLt \
  > "$OUT/build.log" 2>&1 || { echo "build failed"; tail -30 "$OUT/build.log"; exit 3; }
echo "built at $(el) s; warnings: $(grep -ci warning "$OUT/build.log")"
grep -i warning "$OUT/build.log" | head -5
# ptxas figures of the bulk kernels (bk::bulk_i8<MT, BN, BK, S, TMA>): registers, spills
awk '/Compiling entry function/ { cur = ""; if (match($0, /_ZN2bk7bulk_i8ILi[0-9]+ELi[0-9]+ELi[0-9]+ELi[0-9]+ELb[01]E/)) { s = substr($0, RSTART, RLENGTH);
       gsub(/_ZN2bk7bulk_i8ILi|E$/, "", s); sub(/ELb/, "ELi", s); split(s, f, /ELi/); cur = "MT=" f[1] " BN=" f[2] " BK=" f[3] " S=" f[4] " TMA=" f[5] } next }
     cur != "" && /spill stores/ { sp = $0; sub(/.*: */, "", sp); sub(/^ */, "", sp) }
     cur != "" && /Used [0-9]+ registers/ { match($0, /Used [0-9]+ registers/); printf "  %-30s %s, %s\n", cur, substr($0, RSTART, RLENGTH), sp; cur = "" }' "$OUT/build.log"
cuobjdump -sass /tmp/bulk_ab > "$OUT/sass.txt" 2>/dev/null || echo "cuobjdump failed"
# per bulk kernel: instruction counts in its SASS
awk '/Function : / { f = ""; if ($0 ~ /_ZN2bk7bulk_i8/) { f = $0; sub(/.*Function : _ZN2bk7bulk_i8ILi/, "", f); sub(/EEEv.*/, "", f); gsub(/ELi|ELb/, ",", f) } }
     f != "" && /UBLKCP/ { ub[f]++ } f != "" && /UTMALDG/ { tm[f]++ } f != "" && /SYNCS/ { sy[f]++ } f != "" && /LDSM/ { ld[f]++ }
     f != "" && /IMMA/ { im[f]++ } f != "" && /(STL|LDL)/ { lc[f]++ } f != "" { seen[f] = 1 }
     END { for (k in seen) printf "  SASS <MT,BN,BK,S,TMA>=<%s>: UBLKCP %d, UTMALDG %d, SYNCS %d, LDSM %d, IMMA %d, local ld/st %d\n", k, ub[k], tm[k], sy[k], ld[k], im[k], lc[k] }' \
  "$OUT/sass.txt" | sort
echo "  SASS whole binary: $(grep -c UBLKCP "$OUT/sass.txt") UBLKCP, $(grep -c UTMALDG "$OUT/sass.txt") UTMALDG, $(grep -c SYNCS "$OUT/sass.txt") SYNCS; kinds: $(grep -oE '(UBLKCP|SYNCS)[A-Za-z0-9._]*' "$OUT/sass.txt" | sort -u | tr '\n' ' ')"
# a quick plain --check-only first: a hang (mbarrier protocol) shows here in 60 s instead of eating the call
timeout -k 10 60 /tmp/bulk_ab --check-only > "$OUT/check_only.log" 2>&1
crc=$?
echo "check-only rc=$crc at $(el) s:"; grep -E "^M=|FAIL|checks:|CTAs/SM" "$OUT/check_only.log" | head -16
if [ $crc -eq 124 ] || [ $crc -eq 137 ]; then echo "HANG in --check-only (timeout): table and sanitizers skipped"; exit 4; fi
timeout -k 10 ${BULK_AB_TIMEOUT:-150} /tmp/bulk_ab | tee "$OUT/bulk_ab.txt"
rc=${PIPESTATUS[0]}
echo "run rc=$rc at $(el) s"
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then echo "table run timed out: sanitizers skipped"; exit $rc; fi
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
  timeout -k 10 ${SAN_TIMEOUT:-120} "$san" --tool $tool --print-limit 5 /tmp/bulk_ab --check-only > "$OUT/$tool.log" 2>&1
  echo "$tool rc=$? at $(el) s:"; grep -E "^M=|FAIL|checks:|ERROR SUMMARY|RACECHECK SUMMARY|hazard|Invalid|Error" "$OUT/$tool.log" | head -12
done
exit $rc
