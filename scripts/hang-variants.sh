#!/usr/bin/env bash
# The MemoryBaselineGpuTest hang (docs/reliability.md, issue 9), four ways at once on one busy GPU: as is; workers
# drain their per-thread stream before ending; forgotten tensors parked instead of freed on the legacy stream; CUDA's
# eager module loading. Each variant is run.sh's repeat step (the class over and over in its own JVMs, a thread dump
# at the per-run limit), beside run.sh's stress step, which supplies the load the hangs needed.
# Usage (GPU host): scripts/hang-variants.sh <unpacked bundle dir> <out-dir> [seconds, default 220] [JVMs per variant, 2]
set -u
b=${1:?bundle dir}; out=${2:?out dir}; secs=${3:-220}; jvms=${4:-2}
mkdir -p "$out"
export REPEAT_CLASSES=dev.gapfill.ops.MemoryBaselineGpuTest REPEAT_JVMS=$jvms REPEAT_SECONDS=$secs
STRESS_SECONDS=$((secs * 2 / 3)) "$b/run.sh" "$out/stress" stress > "$out/stress.txt" 2>&1 &
for v in base: sync:-Dgapfill.test.syncBeforeExit=true defer:-Dgapfill.forgottenFree=deferred; do
  REPEAT_JOPTS=${v#*:} "$b/run.sh" "$out/${v%%:*}" repeat > "$out/${v%%:*}.txt" 2>&1 &
done
CUDA_MODULE_LOADING=EAGER "$b/run.sh" "$out/eager" repeat > "$out/eager.txt" 2>&1 &
wait
for v in base sync defer eager; do
  echo "hang-variants $v: $(grep -cE " exit (124|137) " "$out/$v/repeat/summary.txt" 2>/dev/null) hung; $(grep "^repeat:" "$out/$v.txt")"
done
grep -E "^stress|ops" "$out/stress.txt" | head -2
