#!/usr/bin/env bash
# The MemoryBaselineGpuTest hang (docs/reliability.md, issue 9), six ways at once. Each variant is run.sh's repeat step
# (the class over and over in its own JVMs, a thread dump at the per-run limit). The hangs needed load, so each GPU also
# runs run.sh's stress step, and each GPU carries three variants:
#   GPU 0: base (as is); sync (workers drain their per-thread stream before ending); defer (forgotten tensors parked,
#          never freed on the legacy stream)
#   GPU 1: eager (CUDA_MODULE_LOADING=EAGER); nodeps (the pool adds no cross-stream waits when it reuses a block);
#          all (sync + defer + eager + nodeps)
# On a one-GPU host every variant runs on GPU 0 (twice the load).
# Usage (GPU host): scripts/hang-variants.sh <unpacked bundle dir> <out-dir> [seconds, default 220] [JVMs per variant, 2]
set -u
b=${1:?bundle dir}; out=${2:?out dir}; secs=${3:-220}; jvms=${4:-2}
mkdir -p "$out"
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
g1=$([ "$ngpu" -ge 2 ] && echo 1 || echo 0)
export REPEAT_CLASSES=dev.gapfill.ops.MemoryBaselineGpuTest REPEAT_JVMS=$jvms REPEAT_SECONDS=$secs
for g in 0 $([ "$g1" = 1 ] && echo 1); do
  CUDA_VISIBLE_DEVICES=$g STRESS_SECONDS=$((secs * 2 / 3)) "$b/run.sh" "$out/stress$g" stress > "$out/stress$g.txt" 2>&1 &
done
sync=-Dgapfill.test.syncBeforeExit=true; defer=-Dgapfill.forgottenFree=deferred; nodeps=-Dgapfill.poolInternalDependencies=false
variant() { # name gpu module-loading jvm-options
  CUDA_VISIBLE_DEVICES=$2 CUDA_MODULE_LOADING=$3 REPEAT_JOPTS=$4 "$b/run.sh" "$out/$1" repeat > "$out/$1.txt" 2>&1 &
}
variant base 0 LAZY ""
variant sync 0 LAZY "$sync"
variant defer 0 LAZY "$defer"
variant eager "$g1" EAGER ""
variant nodeps "$g1" LAZY "$nodeps"
variant all "$g1" EAGER "$sync $defer $nodeps"
wait
for v in base sync defer eager nodeps all; do
  echo "hang-variants $v: $(grep -cE " exit (124|137) " "$out/$v/repeat/summary.txt" 2>/dev/null) hung; $(grep "^repeat:" "$out/$v.txt")"
done
for g in 0 1; do [ -f "$out/stress$g.txt" ] && echo "stress$g: $(grep -E "ops" "$out/stress$g.txt" | head -1)"; done
