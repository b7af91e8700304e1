#!/usr/bin/env bash
# The MemoryBaselineGpuTest hang check (docs/reliability.md, issue 9): the class over and over in its own JVMs
# (run.sh's repeat step: a thread dump and a kill at the per-run limit) beside run.sh's stress step on the same GPU,
# which supplies the load the hang needed. Before threads got Gapfill-owned default streams, 4 of 13 such runs hung
# (c92f09f, H100); with workers draining CUDA's per-thread stream before ending, 0 of 80.
# Usage (GPU host): scripts/hang-check.sh <unpacked bundle dir> <out-dir> [seconds, 220] [JVMs, 4] [GPU index, 0]
set -u
b=${1:?bundle dir}; out=${2:?out dir}; secs=${3:-220}; jvms=${4:-4}; gpu=${5:-0}
mkdir -p "$out"
export CUDA_VISIBLE_DEVICES=$gpu
STRESS_SECONDS=$((secs * 2 / 3)) "$b/run.sh" "$out/stress" stress > "$out/stress.txt" 2>&1 &
REPEAT_CLASSES=dev.gapfill.ops.MemoryBaselineGpuTest REPEAT_JVMS=$jvms REPEAT_SECONDS=$secs \
  "$b/run.sh" "$out/repeat" repeat > "$out/repeat.txt" 2>&1
wait
echo "hang-check on GPU $gpu: $(grep -cE " exit (124|137) " "$out/repeat/repeat/summary.txt" 2>/dev/null) hung; $(grep "^repeat:" "$out/repeat.txt")"
echo "stress: $(grep -E '"(ops|wrong_results|errors|memory_back_to_baseline)"' "$out/stress.txt" | tr -d '\n ' | head -c 200)"
