#!/usr/bin/env bash
# Ran in the twenty-eighth session (cuda-native/dev/grouped_gemm/h100-early-w.txt; no gain, the variants are at git d727e58
# only, so this script no longer builds as it stands). Kept as the shape of a staged harness call, from the repo root:
#   OUT=$OUT bash cuda-native/dev/run_next.sh
# It ran: grouped GEMM at decode, W copies issued before the gather round trip. The shipped w64s6 and
# w64 against the harness-only w64s6e (the first four k tiles' W early), w64s6f (all six stages' W early) and w64e (w64 with
# two early), E = 64, 128 and 160 at T = 1 and 8: correctness of every variant against the fp64 reference first, then the
# timed rows (cuda-native/dev/grouped_gemm/run.sh; ncu off).
# Earlier staged runs: the twenty-seventh session's u = 6 bmm_wg run (cuda-native/dev/bmm/results-h100-c9031cc-u6.txt), the
# sixteenth's u = 4 widths, the fifteenth's mid96 and u5to9 runs, the thirteenth's two experiments at 199face.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-.}; mkdir -p "$OUT/gg-early"
rm -rf "$root/cuda-native/dev/grouped_gemm/cuda" && cp -r "$root/cuda-native/src/main/cuda" "$root/cuda-native/dev/grouped_gemm/cuda"
GG_VARS=${GG_VARS:-w64,w64e,w64s6,w64s6e,w64s6f} GG_MOES=${GG_MOES:-0,1,2} GG_TOKENS=${GG_TOKENS:-1,8} NCU_S=0 SWEEP_S=${SWEEP_S:-240} \
  OUT=$OUT/gg-early timeout 400 bash "$root/cuda-native/dev/grouped_gemm/run.sh"; echo "gg-early rc=$?"
grep -E "TOTAL|checks|failures" "$OUT/gg-early/sweep.txt" | head -5
grep -E "^case|^E" "$OUT/gg-early/sweep.txt" | awk '{ l = ""; for (i = 1; i <= NF; i++) if ($i != "-") l = l " " $i; print l }' | head -60
