#!/usr/bin/env bash
# Staged for the next session with device time (the twenty-eighth session's open experiment): the stride-2 NHWC ring
# kernel of cuda-native/dev/depthwise_conv3x3/ring_s2.patch (docs/ops/depthwise_conv3x3.md, "A stride-2 ring").
# Here first:  git apply cuda-native/dev/depthwise_conv3x3/ring_s2.patch && .ci/run, commit, MVN_FLAGS=" " scripts/gpu-bundle.sh
# Then on the device, from the repo root with .bundle/gapfill-gpu.tgz carried:
#   OUT=$OUT bash cuda-native/dev/run_next.sh
# It runs DepthwiseConv3x3GpuTest under memcheck and racecheck (every kernel instrumented) and initcheck (Gapfill's
# kernels only: cuDNN's algorithm search dies under initcheck otherwise), whose strideTwoRingForcedMatchesTheReference
# forces the new kernel on every dtype, then the depthwise sweep, which times it beside nhwc.cu on every vectorisable
# stride-2 NHWC row (peer nhwc_ring_s2_us, checked first) and re-measures the stride-1 rings the patch touches. If it
# wins, DepthwiseConv3x3Heuristics.useRingS2 defaults on; either way the checks call of the final commit follows.
# Earlier staged runs: the grouped GEMM early-W variants (h100-early-w.txt, no gain), the u = 6 bmm_wg run
# (results-h100-c9031cc-u6.txt), the sixteenth's u = 4 widths, the fifteenth's mid96 and u5to9 runs.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
grep -q dw_ring_s2 cuda-native/src/main/cuda/depthwise_conv3x3/nhwc_ring.cu || { echo "apply ring_s2.patch first"; exit 2; }
RECORD_SOURCE_ONLY=1 . scripts/record-x2.sh
unset SANITIZER_GPUS SANITIZER_JOPTS
export SANITIZER_SHARDS="$SANITIZER_SHARDS dw=.*\.DepthwiseConv3x3GpuTest" SANITIZER_TOOLS="memcheck/dw racecheck/dw initcheck/dw" \
  SANITIZER_GAPFILL_ONLY="initcheck/dw" SANITIZER_TIMEOUT=250 SANITIZER_TEST_TIMEOUT=240s
BENCH_OPS="depthwise_conv3x3:300" timeout 560 scripts/device-run.sh info sanitizer bench
