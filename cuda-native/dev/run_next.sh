#!/usr/bin/env bash
# The one-GPU checks of the current commit in two calls of the same machine (the one-call form took 591 s of the
# 600 s call limit at e86bf38; split at 6ef909e: 559 s and 58 s; the verify module's JVM is faster since 75a419a, 226 s
# beside the whole two-GPU record at 7b1c2fa, so one call may fit again).
# Thirty-seventh session: the record of HEAD after the thirty-sixth session's review fixes (dba8c98 core, 60a427f ops
# validation, 398ff10 verify policy, 813aeec gqa glue check, 73c968a grouped d16 on sm_86/89) with the branch
# gpu-pending-gqa-s2 on top (the 2-stage D = 128 entries for 99 KiB devices, their test
# twoStageD128EntriesMatchTheReferenceAndTheThreeStageBits under gapfill.debug.gqaTwoStages). Its one-GPU record at
# 398ff10 ran the suite and the four tools over the two new GPU classes only; call 2 here runs memcheck, synccheck and
# initcheck over every class those commits changed or added, racecheck over the new ones and over GqaDecodeGpuTest
# (Int8MmGpuTest's racecheck needs record-x2.sh's slices; GroupedGemmGpuTest's ran at 8b7743f with the same kernels).
# Call 3 (if time): scripts/record-x2.sh on nvidia-h100-x2, the whole record;
# BENCH_TIMEOUT=330 BENCH_OPS="gqa_decode:330" scripts/device-run.sh info bench.
# The thirty-sixth session's call 2 ran the four tools over GqaDecodeGpuTest (shard gq=.*\.GqaDecodeGpuTest, every
# kernel; 62, 146, 63, 63 s; 151 s wall) after GqaDecodeHeuristics.oneSplit.
# The thirty-fifth session (the int8 m16 tile, db81ef8) ran them over Int8MmGpuTest: shard i8=.*\.Int8MmGpuTest, tools
# memcheck/i8 synccheck/i8 initcheck/i8, racecheck over the grid in four slices (-Dgapfill.test.slice=K/4, Gapfill's
# kernels only) and over the random property (93 s).
# The thirty-fourth session's calls (the depthwise band entries, shipped at bab3bae) ran the tools over
# DepthwiseConv3x3GpuTest instead: SANITIZER_SHARDS dw=.*\.DepthwiseConv3x3GpuTest, tools memcheck/dw racecheck/dw
# synccheck/dw initcheck/dw, initcheck/dw Gapfill's kernels only (376, 81 and 327 s with the depthwise sweep).
# Usage on the device, bundle carried as .bundle/gapfill-gpu.tar.xz:
#   call 1: cuda-native/dev/run_next.sh             (info tests stress; its results.tgz comes back)
#   call 2: cuda-native/dev/run_next.sh <tgz>       (carry call 1's results.tgz as <tgz> under .bundle/; runs the
#           tools over the classes the review fixes changed and merges call 1's JUnit reports into one record)
#   call 3: the op's sweep on its own (above)
# The machine goes back after 30 s idle: copy the results.tgz and start call 2 at once.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
RECORD_SOURCE_ONLY=1 . scripts/record-x2.sh
unset SANITIZER_GPUS SANITIZER_JOPTS
export SANITIZER_SHARDS="$SANITIZER_SHARDS rv=.*\.(RuntimeOrderingGpuTest|AliasingAndIndexingGpuTest|OpsValidationGpuProperties|GroupedGemmGpuTest|Int8MmGpuTest|MoeRouteGpuTest|GpuRuntimeTest|GqaDecodeGpuTest) gq=.*\.GqaDecodeGpuTest rn=.*\.(RuntimeOrderingGpuTest|AliasingAndIndexingGpuTest|OpsValidationGpuProperties)" \
  SANITIZER_TOOLS="memcheck/rv synccheck/rv initcheck/rv racecheck/rn racecheck/gq" \
  SANITIZER_GAPFILL_ONLY="" \
  SANITIZER_TIMEOUT=450 SANITIZER_TEST_TIMEOUT=440s STRESS_SECONDS=60
if [ $# -eq 0 ]; then
  timeout 590 scripts/device-run.sh info tests stress
else
  prev=/tmp/gapfill-prev; rm -rf "$prev"; mkdir -p "$prev"; tar xzf "$1" -C "$prev" || exit 2
  REPORTS_FROM=$prev timeout 590 scripts/device-run.sh info sanitizer
fi
