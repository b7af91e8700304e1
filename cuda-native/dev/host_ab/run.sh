#!/usr/bin/env bash
# The host-cost A/B on one machine: the host_overhead sweep with the bundle's own core, ops and examples jars ("new")
# and with another commit's (.bundle/base-jars, from base_jars.sh; "base"), alternating base/new ROUNDS times in
# fresh JVMs, then a table of each row's median µs per call over the rounds and new/base. Both sides load the
# bundle's kernels and every other jar. Run after scripts/device-run.sh in the same call (it unpacks the bundle to
# /tmp/gapfill-run/gapfill-gpu): OUT=$OUT bash cuda-native/dev/host_ab/run.sh. Leaves $OUT/host_ab.tgz (every run's
# files and logs) and $OUT/host_ab-summary.txt.
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
b=${BUNDLE_DIR:-/tmp/gapfill-run/gapfill-gpu}
base_dir=${BASE_JARS:-$root/.bundle/base-jars}
dest=${OUT:-.}; out=$(mktemp -d /tmp/host_ab.XXXXXX)  # packed into $dest/host_ab.tgz at the end (a call returns few files)
[ -x "$b/jre/bin/java" ] || { echo "host_ab: no unpacked bundle at $b (run scripts/device-run.sh first)"; exit 2; }
ls "$base_dir"/gapfill-core-*.jar "$base_dir"/gapfill-ops-*.jar "$base_dir"/gapfill-examples-*.jar >/dev/null 2>&1 \
  || { echo "host_ab: no base jars in $base_dir (cuda-native/dev/host_ab/base_jars.sh)"; exit 2; }
java=$b/jre/bin/java
jopts="-Xss4m -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.bytedeco.javacpp.cachedir=${TMPDIR:-/tmp}/javacpp-cache"
# the sides differ in the main jars of core, ops and examples only (core's test-helper jar, used by the CLI, is shared)
mains='/gapfill-(core|ops|examples)-[^/]*\.jar$'
others=$(ls "$b"/lib/*.jar | grep -v console-standalone | grep -vE "$mains" | tr '\n' ':')$(ls "$b"/lib/gapfill-core-*-tests.jar | tr '\n' ':')
cp_new=$others$(ls "$b"/lib/*.jar | grep -E "$mains" | grep -v -- -tests.jar | tr '\n' ':')
cp_base=$others$(ls "$base_dir"/*.jar | grep -E "$mains" | tr '\n' ':')
new_commit=$(sed -n 's/^commit=//p' "$b/BUNDLE_INFO"); base_commit=$(cat "$base_dir/COMMIT" 2>/dev/null || echo unknown)
for r in $(seq 1 "${ROUNDS:-3}"); do
  for side in base new; do
    cp=$cp_new; c=$new_commit; [ $side = base ] && { cp=$cp_base; c=$base_commit; }
    GAPFILL_COMMIT=$c timeout "${AB_TIMEOUT:-60}" "$java" $jopts -cp "$cp" dev.gapfill.examples.GapfillCli bench --op host_overhead \
      --out "$out/$side-$r" > "$out/$side-$r.log" 2>&1
    echo "host_ab $side round $r: exit $?"
  done
done
python3 - "$out" "$base_commit" "$new_commit" <<'PY' | tee "$out/summary.txt"
import glob, json, os, statistics, sys
out, base_c, new_c = sys.argv[1:4]
def load(side):
    runs = []
    for f in sorted(glob.glob(os.path.join(out, side + "-*", "*", "host_overhead.json"))):
        rows = json.load(open(f))["rows"]
        runs.append({r["shape"]["op"]: r for r in rows})
    return runs
base, new = load("base"), load("new")
print(f"host_overhead A/B, µs per call, median over rounds (base {base_c[:12]} x{len(base)}, new {new_c[:12]} x{len(new)})")
print(f"{'op':20s} {'column':7s} {'base':>8s} {'new':>8s} {'new/base':>9s}  rounds apart")
ops = list(dict.fromkeys(op for run in new + base for op in run))
for op in ops:
    for col in ("vendor_us", "custom_us", "auto_us"):
        b = [run[op][col] for run in base if op in run and run[op].get(col) is not None]
        n = [run[op][col] for run in new if op in run and run[op].get(col) is not None]
        if not b and not n:
            continue
        mb = statistics.median(b) if b else None
        mn = statistics.median(n) if n else None
        ratio = f"{mn / mb:9.3f}" if mb and mn else f"{'-':>9s}"
        fmt = lambda x: f"{x:8.2f}" if x is not None else f"{'-':>8s}"
        # "faster"/"slower": every new round below/above every base round (the rounds' ranges do not overlap)
        apart = "faster" if b and n and max(n) < min(b) else "slower" if b and n and min(n) > max(b) else ""
        print(f"{op:20s} {col[:-3]:7s} {fmt(mb)} {fmt(mn)} {ratio}  {apart}")
PY
tar czf "$dest/host_ab.tgz" -C "$out" . && cp "$out/summary.txt" "$dest/host_ab-summary.txt"
