#!/usr/bin/env bash
# The whole validation record on a two-GPU host in one call (about 480 s): the suite and the stress (300 s on eight
# streams, then 150 s on one shared stream) on GPU 0, and every compute-sanitizer tool at full jqwik tries in 24
# processes over both GPUs (20 with RECORD_EXAMPLES=0), sharded by class. Int8MmGpuTest's 72-shape grid runs under racecheck in four slices
# (core's GpuTestSlice) with Gapfill's kernels instrumented only (with cuBLASLt instrumented one K = 4096 shape takes
# minutes); its random property runs in a process of its own with every kernel instrumented, because under the kernel
# filter the tool dies in it ("failed to handle a hardware exception", docs/reliability.md). Initcheck instruments
# Gapfill's kernels only over the depthwise class, MemoryBaselineGpuTest (its random depthwise calls reach cuDNN too;
# at 4f86968 one faulted with an illegal address) and the examples (cuDNN's engine kernels fault under initcheck), every kernel
# elsewhere. Writes what scripts/device-run.sh writes.
# Usage (GPU host, repository root): scripts/record-x2.sh
#   SUITE_FROM=<results.tgz of "device-run.sh info tests" of this commit, carried in the tree> scripts/record-x2.sh:
#   the tools and the stress only, the suite's reports taken from that call (on two H100s the suite beside the 24 tool
#   processes no longer finishes within one call: cut at 595 s at be0282d). Run that tests call on the same two-GPU
#   host, so MultiGpuTest and the two-GPU rules run too.
set -u
gpu1="memcheck/bm synccheck/bm racecheck/bn initcheck/eb racecheck/g racecheck/m racecheck/i0 racecheck/i1 initcheck/d"
# the examples module's GPU classes (the demo, the stress command, the lessons) under every tool; RECORD_EXAMPLES=0
# leaves them out (at 4f86968, every kernel instrumented: memcheck 61 s, initcheck 106 s; racecheck and synccheck
# timed out at 450 s, hence the kernel filter below)
if [ "${RECORD_EXAMPLES:-1}" = 1 ]; then gpu1="$gpu1 memcheck/x racecheck/x"; xs="synccheck/x initcheck/x"; fi
gpu0="memcheck/r synccheck/r initcheck/er racecheck/gd racecheck/e racecheck/c racecheck/v racecheck/i2 racecheck/i3"
gpu0="$gpu0 racecheck/ip racecheck/bv ${xs:-}"
# BmmGpuTest under racecheck in two processes: its vendor split-K test alone (bv), whose folded n = 8 GEMMs run cuBLAS's
# nvjet 64x8 kernels (at 4a5fe64 racecheck/bm reported 8 hazards inside them, none in a Gapfill kernel), and the rest (bn)
bm=dev.gapfill.verify.BmmGpuTest
bv="methods:$bm#vendorPathReducesSplitKPartialsInFp32()"
bn="methods:$bm#randomShapesBothBackends(int,int,int,int,int,boolean,boolean,boolean,int,boolean,int,long)"
bn="$bn|$bm#wgRandomShapes(int,int,int,int,boolean,boolean,boolean,boolean,boolean,long)"
for t in regimeBoundaries teamKernelShapesLayoutsAndAlignment teamKernelHalfMidSizesEveryWidthAndLayout wgKernelShapesLayoutsAndBatches \
    fragKernelShapesLayoutsOffsetsAndMatricesPerWarp frag32KernelShapesLayoutsOffsetsAndWarpsPerMatrix \
    f32FragKernelShapesOffsetsAndMatricesPerWarp allLayoutsAndSharedBAtOddSizes aboveTheCustomLimitAutoIsVendorAndCustomIsRefused \
    gemvKernelShapesLayoutsAndBatches rowChunkEntriesAndTheirFallbackOnBAndCViews tf32IsWithinTheTf32Bound sameInputsGiveTheSameBitsTwice \
    decideMatchesTheHeuristicsForTheDevice; do bn="$bn|$bm#$t()"; done
i8=dev.gapfill.verify.Int8MmGpuTest
grid="methods:$i8#everyBackendMatchesTheReferenceAndTheVendor(int,int,int)|$i8#newOutputOnThePerThreadStream()"
grid="$grid|$i8#validationRunsBeforeAnyLaunchOnTheGpu()|$i8#vendorRunsOnViewsOn16BytesOnly()"
property="methods:$i8#randomProblemsMatchTheReferenceOnEveryBackend(dev.gapfill.verify.Int8MmArbitraries\$Problem,long)"
export SANITIZER_TOOLS="$gpu1 $gpu0"
export SANITIZER_SHARDS='bm=.*\.BmmGpuTest eb=.*\.BmmGpuTest'\
' r=^(?!.*\.BmmGpuTest$)(?!dev\.gapfill\.examples\.).*(Test|Tests|Properties)$'\
' er=^(?!.*\.(Bmm|DepthwiseConv3x3|MemoryBaseline)GpuTest$)(?!dev\.gapfill\.examples\.).*(Test|Tests|Properties)$'\
' x=dev\.gapfill\.examples\.(DemoTest|StressCmdTest|LessonsTest)'\
' d=.*\.(DepthwiseConv3x3|MemoryBaseline)GpuTest gd=.*\.(GqaDecode|DepthwiseConv3x3)GpuTest g=.*\.GroupedGemmGpuTest'\
' m=.*\.MoeRouteGpuTest e=.*\.ElementwiseGpuTest c=.*\.(GpuRuntimeTest|MemoryBaselineGpuTest|MultiGpuTest)'\
' v=.*\.(Ops|Tensor)ValidationGpuProperties'" i0=$grid i1=$grid i2=$grid i3=$grid ip=$property bn=$bn bv=$bv"
g=""; for e in $gpu1; do g="$g $e=1,0"; done
export SANITIZER_GPUS="${g# }"
export SANITIZER_JOPTS="racecheck/i0=-Dgapfill.test.slice=0/4 racecheck/i1=-Dgapfill.test.slice=1/4"\
" racecheck/i2=-Dgapfill.test.slice=2/4 racecheck/i3=-Dgapfill.test.slice=3/4"
export SANITIZER_GAPFILL_ONLY="initcheck/d racecheck/i0 racecheck/i1 racecheck/i2 racecheck/i3"
# The examples (x) under initcheck, racecheck and synccheck instrument Gapfill's kernels only: lesson 03 and `verify`
# call cuDNN's depthwise engines, which fault under initcheck; racecheck reports hazards inside cuBLAS's Hopper nvjet
# GEMM kernels (74 at 4f86968, none in a Gapfill kernel); and with every kernel instrumented the stress command's
# cuBLASLt calls and the demo's 8192^3 ceiling GEMMs keep racecheck and synccheck past 450 s. Memcheck takes them all.
[ "${RECORD_EXAMPLES:-1}" = 1 ] && SANITIZER_GAPFILL_ONLY="$SANITIZER_GAPFILL_ONLY initcheck/x racecheck/x synccheck/x"
export SANITIZER_SCOPE="core ops verify examples"
export SANITIZER_TIMEOUT=${SANITIZER_TIMEOUT:-480} SANITIZER_TEST_TIMEOUT=${SANITIZER_TEST_TIMEOUT:-470s}
# the suite's per-module limit: verify took 326 s on one H100 beside four tool processes at fb9b143 (260 s another time),
# 443 s and 461 s beside the stress and the four tools over the depthwise class at 8fc4064 and e86bf38
export STRESS_SECONDS=${STRESS_SECONDS:-300} TESTS_TIMEOUT=${TESTS_TIMEOUT:-520}
# scripts/record-x1.sh sources this file for its settings (RECORD_SOURCE_ONLY=1) and splits the processes over two calls
[ "${RECORD_SOURCE_ONLY:-0}" = 1 ] && return 0
if [ -n "${SUITE_FROM:-}" ]; then
  from=$(mktemp -d); tar xzf "$SUITE_FROM" -C "$from" || { echo "record-x2: cannot unpack SUITE_FROM=$SUITE_FROM"; exit 2; }
  export REPORTS_FROM="$from" CHECKS_TESTS=0
fi
exec "$(dirname "$0")/device-run.sh" info checks
