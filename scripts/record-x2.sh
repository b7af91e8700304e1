#!/usr/bin/env bash
# The whole validation record on a two-GPU host in one call (about 480 s): the suite and the stress (300 s on eight
# streams, then 150 s on one shared stream) on GPU 0, and every compute-sanitizer tool at full jqwik tries in 19
# processes over both GPUs, sharded by class. Int8MmGpuTest's 72-shape grid runs under racecheck in four slices
# (core's GpuTestSlice) with Gapfill's kernels instrumented only (with cuBLASLt instrumented one K = 4096 shape takes
# minutes); its random property runs in a process of its own with every kernel instrumented, because under the kernel
# filter the tool dies in it ("failed to handle a hardware exception", docs/reliability.md). Initcheck instruments
# Gapfill's kernels only over the depthwise class and the examples (cuDNN's engine kernels fault under initcheck), every kernel
# elsewhere. Writes what scripts/device-run.sh writes.
# Usage (GPU host, repository root): scripts/record-x2.sh
set -u
gpu1="memcheck/bm synccheck/bm racecheck/bm initcheck/eb racecheck/g racecheck/m racecheck/i0 racecheck/i1 initcheck/d"
# the examples module's GPU classes (the demo, the stress command, the lessons) under every tool; RECORD_EXAMPLES=0
# leaves them out (added after f48ce11's record; their time under the tools is not measured yet)
if [ "${RECORD_EXAMPLES:-1}" = 1 ]; then gpu1="$gpu1 memcheck/x racecheck/x"; xs="synccheck/x initcheck/x"; fi
gpu0="memcheck/r synccheck/r initcheck/er racecheck/gd racecheck/e racecheck/c racecheck/v racecheck/i2 racecheck/i3"
gpu0="$gpu0 racecheck/ip ${xs:-}"
i8=dev.gapfill.verify.Int8MmGpuTest
grid="methods:$i8#everyBackendMatchesTheReferenceAndTheVendor(int,int,int)|$i8#newOutputOnThePerThreadStream()"
grid="$grid|$i8#validationRunsBeforeAnyLaunchOnTheGpu()"
property="methods:$i8#randomProblemsMatchTheReferenceOnEveryBackend(dev.gapfill.verify.Int8MmArbitraries\$Problem,long)"
export SANITIZER_TOOLS="$gpu1 $gpu0"
export SANITIZER_SHARDS='bm=.*\.BmmGpuTest eb=.*\.BmmGpuTest'\
' r=^(?!.*\.BmmGpuTest$)(?!dev\.gapfill\.examples\.).*(Test|Tests|Properties)$'\
' er=^(?!.*\.(Bmm|DepthwiseConv3x3)GpuTest$)(?!dev\.gapfill\.examples\.).*(Test|Tests|Properties)$'\
' x=dev\.gapfill\.examples\.(DemoTest|StressCmdTest|LessonsTest)'\
' d=.*\.DepthwiseConv3x3GpuTest gd=.*\.(GqaDecode|DepthwiseConv3x3)GpuTest g=.*\.GroupedGemmGpuTest'\
' m=.*\.MoeRouteGpuTest e=.*\.ElementwiseGpuTest c=.*\.(GpuRuntimeTest|MemoryBaselineGpuTest|MultiGpuTest)'\
' v=.*\.(Ops|Tensor)ValidationGpuProperties'" i0=$grid i1=$grid i2=$grid i3=$grid ip=$property"
g=""; for e in $gpu1; do g="$g $e=1,0"; done
export SANITIZER_GPUS="${g# }"
export SANITIZER_JOPTS="racecheck/i0=-Dgapfill.test.slice=0/4 racecheck/i1=-Dgapfill.test.slice=1/4"\
" racecheck/i2=-Dgapfill.test.slice=2/4 racecheck/i3=-Dgapfill.test.slice=3/4"
export SANITIZER_GAPFILL_ONLY="initcheck/d racecheck/i0 racecheck/i1 racecheck/i2 racecheck/i3"
# lesson 03 and the demo call cuDNN's depthwise engines, which fault under initcheck like initcheck/d's
[ "${RECORD_EXAMPLES:-1}" = 1 ] && SANITIZER_GAPFILL_ONLY="$SANITIZER_GAPFILL_ONLY initcheck/x"
export SANITIZER_SCOPE="core ops verify examples"
export SANITIZER_TIMEOUT=${SANITIZER_TIMEOUT:-480} SANITIZER_TEST_TIMEOUT=${SANITIZER_TEST_TIMEOUT:-470s}
export STRESS_SECONDS=${STRESS_SECONDS:-300} TESTS_TIMEOUT=${TESTS_TIMEOUT:-300}
exec "$(dirname "$0")/device-run.sh" info checks
