#!/usr/bin/env bash
# Staged for the next session with device time (the twenty-ninth session's open result): the F32 stride-1 NHWC ring in a
# 2 x 2 geometry, depthwise_conv3x3/f32_c2w2_s1.patch (applies to 17854af; kernel, switch, sweep peer, GPU test, CPU
# test). Its H100 run at 17854af + the patch (depthwise_conv3x3/h100-17854af-f32-c2w2.txt): memcheck and racecheck over
# DepthwiseConv3x3GpuTest 0 errors; 2 x 2 / 2 x 4 time 0.84-0.97 on F32 SiLU/GELU of 1x64x64x384 and 8x112x112x96
# (with one timing mode where 2 x 4 has two, the cause of depthwise AUTO's two misses), 1.01-1.23 elsewhere.
# The patch carries the rule (F32 SiLU/GELU below 10M outputs -> RingConfig.C2W2_F32; the property forces either
# geometry), its CPU tests, the GPU ring test's forced and rule modes, and the sweep peer (the F32 geometry the rule
# did not pick); CI passed with it applied at 7e56dd1. A run of 39850d5 + the patch (dirty tree; memcheck, initcheck
# and the F32 sweep, depthwise_conv3x3/h100-39850d5-f32-c2w2-rule.json): the rule picked the faster geometry on 23 of
# 24 F32 stride-1 NHWC rows, AUTO within 5 % on 72 of 72 F32 rows. Next: git apply it; .ci/run; commit; MVN_FLAGS=" "
# scripts/gpu-bundle.sh; then this script on the device (the checks) and the depthwise sweep on the same machine.
# Earlier staged runs: the stride-2 ring (ran at 0bb8244, shipped at 8fc4064), the grouped GEMM early-W variants
# (h100-early-w.txt, no gain), the u = 6 bmm_wg run (results-h100-c9031cc-u6.txt), the sixteenth's u = 4 widths, the
# fifteenth's mid96 and u5to9 runs.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
grep -q c2w2_f32_s1 cuda-native/src/main/cuda/depthwise_conv3x3/nhwc_ring.cu || { echo "apply depthwise_conv3x3/f32_c2w2_s1.patch first" >&2; exit 2; }
RECORD_SOURCE_ONLY=1 . scripts/record-x2.sh
unset SANITIZER_GPUS SANITIZER_JOPTS
export SANITIZER_SHARDS="$SANITIZER_SHARDS dw=.*\.DepthwiseConv3x3GpuTest" \
  SANITIZER_TOOLS="memcheck/dw racecheck/dw synccheck/dw initcheck/dw" SANITIZER_GAPFILL_ONLY="initcheck/dw" \
  SANITIZER_TIMEOUT=330 SANITIZER_TEST_TIMEOUT=320s STRESS_SECONDS=60
# The one-call checks took 591 s of the 600 s call limit at e86bf38 (the verify module alone 461 s); if it runs out,
# split it: the same settings with the steps "info tests stress" in one call (~480 s), then a second call carrying that
# call's results.tgz (in .bundle/) that extracts it and runs the step "sanitizer" with REPORTS_FROM=<its directory>,
# which merges both into one record (scripts/bundle-run.sh, REPORTS_FROM).
timeout 585 scripts/device-run.sh info checks
# then, in a further call on the same machine: BENCH_OPS="depthwise_conv3x3:300" scripts/device-run.sh info bench
