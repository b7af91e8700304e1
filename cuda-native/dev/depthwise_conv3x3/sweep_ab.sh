#!/usr/bin/env bash
# Two depthwise sweeps (the Java benchmark, every row checked against the reference) in one device call, for an A/B of
# kernel builds that the dev harnesses cannot launch (F32, every layout and activation): A = the carried bundle as
# built, then B = the same bundle with the depthwise fatbins in <alt-dir> (<kernel>.fatbin, e.g. built from another
# commit with build-fatbins.sh into a git-ignored folder named in carry) swapped into its cuda-native jar.
# Results: $OUT/a.tgz and $OUT/b.tgz (each a device-run.sh results archive), $OUT/a.log, $OUT/b.log.
# B's JSON names the bundle's commit; which fatbins it ran is what this script prints (their sha1).
# BENCH_ARGS="--dtype F32" limits both sweeps to the F32 cases (72 of 216 rows: about a third of the time).
# Usage (GPU host, repository root): bash cuda-native/dev/depthwise_conv3x3/sweep_ab.sh <alt-dir>
set -u
alt=${1:?directory of alternative depthwise fatbins}
ops=${BENCH_OPS:-depthwise_conv3x3:280}
BENCH_OPS=$ops scripts/device-run.sh bench > "$OUT/a.log" 2>&1
mv "$OUT/results.tgz" "$OUT/a.tgz"; mv "$OUT/run.log" "$OUT/a-run.log"
tail -3 "$OUT/a.log"
work=/tmp/gapfill-run
jar=$(ls "$work"/gapfill-gpu/lib/gapfill-cuda-native-*.jar | grep -v tests | head -1)
python3 - "$jar" "$alt" <<'EOF'
import hashlib, os, shutil, sys, zipfile
jar, alt = sys.argv[1], sys.argv[2]
swap = {f"dev/gapfill/cuda/depthwise_conv3x3/{f}": os.path.join(alt, f) for f in os.listdir(alt) if f.endswith(".fatbin")}
tmp = jar + ".tmp"
with zipfile.ZipFile(jar) as zin, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zout:
    names = set(zin.namelist())
    missing = [n for n in swap if n not in names]
    if missing:
        sys.exit(f"not in the jar: {missing}")
    for item in zin.infolist():
        data = open(swap[item.filename], "rb").read() if item.filename in swap else zin.read(item.filename)
        zout.writestr(item, data)
shutil.move(tmp, jar)
for n, p in sorted(swap.items()):
    print("B:", n, hashlib.sha1(open(p, "rb").read()).hexdigest()[:12])
EOF
[ $? -eq 0 ] || { echo "jar patch failed"; exit 1; }
mkdir -p "$work/resB"
BENCH_OPS=$ops "$work/gapfill-gpu/run.sh" "$work/resB" bench > "$OUT/b.log" 2>&1
rc=$?
tar czf "$OUT/b.tgz" -C "$work/resB" .
grep -E "bench " "$OUT/b.log" | tail -2
echo "sweep_ab rc=$rc"
