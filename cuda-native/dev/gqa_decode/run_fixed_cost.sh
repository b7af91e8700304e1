#!/usr/bin/env bash
# One device call (about a minute): builds fixed_cost.cu, runs it (the table of conditions), then the same launches
# under ncu for gpu__time_duration (kernel time without the launch overhead; ncu flushes the caches before every
# replay, so it is the cold case), summarised as the median per kernel and grid.
# Run from the repo root: OUT=$OUT bash cuda-native/dev/gqa_decode/run_fixed_cost.sh
set -u
here=$(cd "$(dirname "$0")" && pwd); src=$here/../../src/main/cuda
OUT=${OUT:-.}; mkdir -p "$OUT"
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I"$src/common" -I"$src/gqa_decode" -I"$here/../timing" \
  -o /tmp/gqa_fixed "$here/fixed_cost.cu" || exit 1
timeout 240 /tmp/gqa_fixed | tee "$OUT/fixed_cost.txt"; rc=${PIPESTATUS[0]}
echo "fixed_cost rc=$rc"
if command -v ncu >/dev/null 2>&1; then
  timeout 240 ncu --clock-control none -k 'regex:gqa_decode_mma|empty_kernel' --metrics gpu__time_duration.sum --csv \
    /tmp/gqa_fixed ncu > "$OUT/fixed_cost_ncu.csv" 2>"$OUT/fixed_cost_ncu.err"; echo "ncu rc=$?"
  python3 - "$OUT/fixed_cost_ncu.csv" <<'PY' | tee "$OUT/fixed_cost_ncu.txt"
import csv, sys, statistics, collections
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
if not rows: print("ncu: no rows"); sys.exit(0)
h = rows[0]; ki, gi, ui, vi = h.index("Kernel Name"), h.index("Grid Size"), h.index("Metric Unit"), h.index("Metric Value")
by = collections.defaultdict(list)
for r in rows[1:]:
    v = float(r[vi].replace(",", ""))
    v *= {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1, "us": 1, "msecond": 1e3, "ms": 1e3}.get(r[ui], float("nan"))  # -> us
    by[(r[ki].split("(")[0], r[gi])].append(v)
print("ncu gpu__time_duration (us, median per kernel and grid (splits, kv heads x tiles, B)):")
for (k, g), v in sorted(by.items()): print(f"  {k:28s} grid {g:16s} n={len(v):3d}  {statistics.median(v):8.2f}")
PY
else
  echo "ncu not found"
fi
exit $rc
