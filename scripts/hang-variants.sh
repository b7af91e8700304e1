#!/usr/bin/env bash
# The MemoryBaselineGpuTest hang (docs/reliability.md, issue 9), four ways at once on one busy GPU: as is; workers
# drain their per-thread stream before ending; forgotten tensors parked instead of freed on the legacy stream; CUDA's
# eager module loading. Each variant runs the class over and over in its own JVMs (scripts/repeat-tests.sh, thread
# dump at the per-run limit) beside `gapfill stress`, which supplies the load the hangs needed.
# Usage (GPU host, repo root): scripts/hang-variants.sh <bundle-dir> <out-dir> [seconds, default 220] [JVMs per variant, 2]
set -u
b=${1:?bundle dir}; out=${2:?out dir}; secs=${3:-220}; jvms=${4:-2}
here=$(cd "$(dirname "$0")" && pwd)
cls=dev.gapfill.ops.MemoryBaselineGpuTest
mkdir -p "$out"
( cd "$b" && LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} timeout $((secs + 60)) jre/bin/java -Xss4m \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$(ls lib/*.jar | grep -v console-standalone | tr '\n' ':')" \
    dev.gapfill.examples.GapfillCli stress --seconds $((secs * 2 / 3)) --out "$out/stress.json" > "$out/stress.log" 2>&1 ) &
REPEAT_JOPTS= "$here/repeat-tests.sh" "$b" "$out/base" "$cls" "$jvms" "$secs" 100 > "$out/base.txt" 2>&1 &
REPEAT_JOPTS=-Dgapfill.test.syncBeforeExit=true "$here/repeat-tests.sh" "$b" "$out/sync" "$cls" "$jvms" "$secs" 100 > "$out/sync.txt" 2>&1 &
REPEAT_JOPTS=-Dgapfill.forgottenFree=deferred "$here/repeat-tests.sh" "$b" "$out/defer" "$cls" "$jvms" "$secs" 100 > "$out/defer.txt" 2>&1 &
CUDA_MODULE_LOADING=EAGER "$here/repeat-tests.sh" "$b" "$out/eager" "$cls" "$jvms" "$secs" 100 > "$out/eager.txt" 2>&1 &
wait
for v in base sync defer eager; do
  runs=$(wc -l < "$out/$v/summary.txt" 2>/dev/null || echo 0)
  hung=$(grep -c " exit 137 " "$out/$v/summary.txt" 2>/dev/null || true)
  failed=$(grep -v " exit 0 " "$out/$v/summary.txt" 2>/dev/null | grep -vc " exit 137 " || true)
  echo "hang-variants $v: $runs runs, ${hung:-0} hung, ${failed:-0} failed otherwise"
done
grep -E '"(ops|wrong_results|errors|memory_back_to_baseline)"' "$out/stress.log" | tr -s ' ' | tr '\n' ' '; echo
