#!/usr/bin/env bash
# The command the lent GPU machine runs: unpack the carried bundle, run the requested steps, and put
# everything into $OUT/results.tgz (the tool returns at most 8 files) with the validation record beside it.
# Usage (from the repo root on the device): scripts/device-run.sh <steps...>   e.g. "info demo checks" or "bench"
# (steps and their variables: scripts/bundle-run.sh)
set -uo pipefail
steps=${*:-info tests sanitizer bench}
work=/tmp/gapfill-run; rm -rf "$work"; mkdir -p "$work"
tar xzf .bundle/gapfill-gpu.tgz -C "$work"
nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,memory.used --format=csv,noheader
"$work/gapfill-gpu/run.sh" "$work/res" $steps > "$OUT/run.log" 2>&1
rc=$?
tar czf "$OUT/results.tgz" -C "$work/res" .
cp "$work"/res/validation/*.json "$OUT/" 2>/dev/null
grep -E "tests\[|tests (found|successful|failed|skipped)|compute-sanitizer|stress:|bench |validation record|ceilings|FAILED" "$OUT/run.log" | head -40
grep -E "✘" "$work/res/tests.log" 2>/dev/null | head -30
echo "device-run rc=$rc"
exit $rc
