#!/usr/bin/env bash
# The one-GPU checks of the current commit in two calls of the same machine (the one-call form took 591 s of the
# 600 s call limit at e86bf38; split at 6ef909e: 559 s and 58 s; the verify module's JVM is faster since 75a419a, 226 s
# beside the whole two-GPU record at 7b1c2fa, so one call may fit again).
# Staged in the thirty-third session, applied and shipped in the thirty-fourth: depthwise_conv3x3/plane_band_entries.patch
# (removed from the tree; it is in git history). nchw_plane.cu with the band choice as a
# template parameter, one entry point per form (whole planes as before, "_band" for bands), so that the whole-plane
# entries compile close to 644f67f's: their compute_90a PTX differs from 644f67f's in 65-84 lines of 830-6,140 (201
# on the two 16-bit 1-column entries; symbol names, the row address computed once, one more parameter) and their
# registers match 644f67f's on 19 of 28 entries (7bd2477: 7 of 28). Why: in the 7bd2477 sweep the F32 7-column whole-plane rows took 1.013-1.020x their
# 644f67f time. It also names the "two planes do not fit" test once (planeNeedsBands) and corrects usePlane's javadoc on
# F16/BF16 bands. Its checks ran as the three calls below in the thirty-fourth session (376, 81 and 327 s; the sweep
# complete, the whole-plane rows back to 1.002-1.010x their 644f67f time).
# Before it: depthwise_conv3x3/nchw_s2_f32_smooth_rows.patch (thirty-second session, host code only: F32
# SiLU/GELU at stride 2 keep nchw.cu's target strip height instead of the c8843ec wave model's; evidence
# docs/benchmark-runs/h100/depthwise-knob-probe-c8843ec-f32-smooth.txt), applied and shipped in the thirty-third
# session; its checks ran this way (the two calls below, then the depthwise sweep).
# Before it, depthwise_conv3x3/nchw_u3.patch (nchw.cu's stride-1 row loop unrolled
# three times for F16/BF16 exact activations), shipped at 0fe90d3; its checks ran this way in the thirty-first session
# (call 1 321 s; call 2 the four tools, then the depthwise sweep, 284 s in all).
# The F32 stride-1 2 x 2 ring geometry (the twenty-ninth session's patch) shipped at 6ef909e. Earlier staged runs: the stride-2 ring (ran at 0bb8244, shipped at 8fc4064), the grouped GEMM early-W variants
# (h100-early-w.txt, no gain), the u = 6 bmm_wg run (results-h100-c9031cc-u6.txt), the sixteenth's u = 4 widths, the
# fifteenth's mid96 and u5to9 runs.
# Usage on the device, bundle carried as .bundle/gapfill-gpu.tar.xz:
#   call 1: cuda-native/dev/run_next.sh             (info tests stress; its results.tgz comes back)
#   call 2: cuda-native/dev/run_next.sh <tgz>       (carry call 1's results.tgz as <tgz> under .bundle/; runs the
#           four tools over DepthwiseConv3x3GpuTest and merges call 1's JUnit reports into one record)
#   call 3: BENCH_TIMEOUT=450 BENCH_OPS="depthwise_conv3x3:450" scripts/device-run.sh info bench, on its own (264 s
#           at 644f67f; at 7bd2477 the band peers made 320 s too short, 200 of 216 rows, so after call 2's four tools
#           (~195 s) it no longer fits one 600 s call; on its own 322 s at bab3bae)
# The machine goes back after 30 s idle: copy the results.tgz and start call 2 at once.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
RECORD_SOURCE_ONLY=1 . scripts/record-x2.sh
unset SANITIZER_GPUS SANITIZER_JOPTS
export SANITIZER_SHARDS="$SANITIZER_SHARDS dw=.*\.DepthwiseConv3x3GpuTest" \
  SANITIZER_TOOLS="memcheck/dw racecheck/dw synccheck/dw initcheck/dw" SANITIZER_GAPFILL_ONLY="initcheck/dw" \
  SANITIZER_TIMEOUT=330 SANITIZER_TEST_TIMEOUT=320s STRESS_SECONDS=60
if [ $# -eq 0 ]; then
  timeout 590 scripts/device-run.sh info tests stress
else
  prev=/tmp/gapfill-prev; rm -rf "$prev"; mkdir -p "$prev"; tar xzf "$1" -C "$prev" || exit 2
  REPORTS_FROM=$prev timeout 590 scripts/device-run.sh info sanitizer
fi
