#!/usr/bin/env bash
# The wgmma A/B (wgmma_ab.cu): build, SASS check (IGMMA emitted, no spills), the checks + timing table, then the
# checks of one shape under compute-sanitizer memcheck. On the GPU host, from the repo root:
#   bash cuda-native/dev/int8_mm/run_wgmma_ab.sh            (OUT=dir keeps the logs; default /tmp/wgmma_ab_out)
#   bash cuda-native/dev/int8_mm/run_wgmma_ab.sh --sweep    (instead of the table: every split count of every variant)
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/wgmma_ab_out}; mkdir -p "$OUT"
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
export PATH="$PATH:/usr/local/cuda/bin"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
inc="-I$here/../../src/main/cuda/common -I$here/../timing -I$here/../../src/main/cuda/int8_mm"
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xcompiler -march=native $inc -Xptxas -v -o /tmp/wgmma_ab "$here/wgmma_ab.cu" -lcublasLt \
  > "$OUT/build.log" 2>&1 || { echo "build failed"; tail -30 "$OUT/build.log"; exit 3; }
echo "built at $(el) s; warnings: $(grep -ci warning "$OUT/build.log")"
grep -i warning "$OUT/build.log" | head -5
# ptxas figures of the wgmma kernels: registers, spills
awk '/Compiling entry function/ { cur = ""; if (match($0, /_ZN3wgk8wgmma_i8ILi[0-9]+ELi[0-9]+ELi[0-9]+E/)) { s = substr($0, RSTART, RLENGTH);
       gsub(/_ZN3wgk8wgmma_i8ILi|E$/, "", s); split(s, f, /ELi/); cur = "NT=" f[1] " WG=" f[2] " D=" f[3] } next }
     cur != "" && /spill stores/ { sp = $0; sub(/.*: */, "", sp) }
     cur != "" && /Used [0-9]+ registers/ { match($0, /Used [0-9]+ registers/); printf "  %-18s %s, %s\n", cur, substr($0, RSTART, RLENGTH), sp; cur = "" }' "$OUT/build.log"
cuobjdump -sass /tmp/wgmma_ab > "$OUT/sass.txt" 2>/dev/null
echo "SASS: $(grep -c IGMMA "$OUT/sass.txt") IGMMA, $(grep -c HGMMA "$OUT/sass.txt") HGMMA, $(grep -cE 'STL|LDL' "$OUT/sass.txt") local ld/st (whole binary); $(grep -oE 'IGMMA[A-Za-z0-9._]+' "$OUT/sass.txt" | sort -u | head -4 | tr '\n' ' ')"
mode=${1:-}
timeout ${WGMMA_AB_TIMEOUT:-150} /tmp/wgmma_ab $mode | tee "$OUT/wgmma_ab.txt"
rc=${PIPESTATUS[0]}
echo "run rc=$rc at $(el) s"
if [ -z "$mode" ]; then
  san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  timeout ${MEMCHECK_TIMEOUT:-120} "$san" --tool memcheck --print-limit 5 /tmp/wgmma_ab --check-only > "$OUT/memcheck.log" 2>&1
  echo "memcheck rc=$? at $(el) s:"; grep -E "^M=|FAIL|checks:|ERROR SUMMARY|Invalid|Error" "$OUT/memcheck.log" | head -12
fi
exit $rc
