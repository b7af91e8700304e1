#!/usr/bin/env bash
# The command the lent GPU machine runs: unpack the carried bundle, run the requested steps, and put
# everything into $OUT/results.tgz (the tool returns at most 8 files) with the validation record beside it; while
# it runs, $OUT/partial.tgz holds a snapshot at most 45 s old, which is what comes back if the call is cut off.
# Usage (from the repo root on the device): scripts/device-run.sh <steps...>   e.g. "info demo checks" or "bench"
# (steps and their variables: scripts/bundle-run.sh)
set -uo pipefail
steps=${*:-info tests sanitizer bench}
work=/tmp/gapfill-run; rm -rf "$work"; mkdir -p "$work"
# the bundle: .bundle/gapfill-gpu.tar.xz (scripts/gpu-bundle.sh), unpacked by Python's lzma where xz is missing
if [ -f .bundle/gapfill-gpu.tar.xz ]; then
  if command -v xz >/dev/null; then tar xJf .bundle/gapfill-gpu.tar.xz -C "$work"
  else python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1], "r:xz").extractall(sys.argv[2])' .bundle/gapfill-gpu.tar.xz "$work"
  fi || { echo "device-run: cannot unpack .bundle/gapfill-gpu.tar.xz"; exit 2; }
else
  tar xzf .bundle/gapfill-gpu.tgz -C "$work" || { echo "device-run: no bundle (.bundle/gapfill-gpu.tar.xz or .tgz)"; exit 2; }
fi
nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,memory.used --format=csv,noheader
mkdir -p "$work/res"
# A call cut off at its time limit returns only what is under $OUT: keep a recent snapshot of the results there
# (every 45 s, written aside and renamed, so a cut never leaves a torn archive), removed once the run ends.
( while sleep 45; do
    tar czf "$OUT/partial.tgz.tmp" -C "$work/res" . 2>/dev/null && mv -f "$OUT/partial.tgz.tmp" "$OUT/partial.tgz"
  done ) &
snap=$!
"$work/gapfill-gpu/run.sh" "$work/res" $steps > "$OUT/run.log" 2>&1
rc=$?
kill "$snap" 2>/dev/null; wait "$snap" 2>/dev/null
rm -f "$OUT/partial.tgz" "$OUT/partial.tgz.tmp"
tar czf "$OUT/results.tgz" -C "$work/res" .
cp "$work"/res/validation/*.json "$OUT/" 2>/dev/null
grep -E "tests\[|tests (found|successful|failed|skipped)|compute-sanitizer|stress:|bench |validation record|ceilings|FAILED" "$OUT/run.log" | head -40
grep -E "✘" "$work/res/tests.log" 2>/dev/null | head -30
echo "device-run rc=$rc"
exit $rc
