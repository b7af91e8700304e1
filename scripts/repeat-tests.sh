#!/usr/bin/env bash
# Runs test classes over and over, in several JVMs at once, to catch a hang or failure that shows up rarely (run on the
# GPU host from an unpacked bundle). Each run is one JUnit console launcher process over the classes. A run still going
# after its limit gets SIGQUIT: the JVM writes every thread's stack (with the locks held and awaited) into the run's log,
# and 20 s later it is killed. The logs of failed or hung runs are kept; those of passing runs are removed.
# Usage: scripts/repeat-tests.sh <bundle-dir> <out-dir> "<class> [<class>...]" <jvms> <seconds> [limit per run, s]
# REPEAT_JOPTS: extra JVM options of every run (e.g. -Dgapfill.forgottenFree=deferred, to compare two policies).
# Writes <out-dir>/summary.txt (one line a run: "jvm<j> run<r> exit <rc> <seconds>s") and <out-dir>/jvm<j>-run<r>.log.
set -u
b=${1:?bundle dir}; out=${2:?out dir}; classes=${3:?classes}; jvms=${4:?jvms}; secs=${5:?seconds}; limit=${6:-120}
export LD_LIBRARY_PATH=${GAPFILL_CUDA_LIBS:+$GAPFILL_CUDA_LIBS:}/usr/local/cuda/lib64:/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
java="$b/jre/bin/java"
cp_libs=$(ls "$b"/lib/*.jar | grep -v console-standalone | tr '\n' ':')
cp_tests=$(ls -d "$b"/tests/*/ | sed 's#/$##' | tr '\n' ':')
launcher=$(ls "$b"/lib/junit-platform-console-standalone-*.jar)
select=(); for c in $classes; do select+=(--select-class "$c"); done
mkdir -p "$out"
end=$(( $(date +%s) + secs ))
for j in $(seq 1 "$jvms"); do
  (
    r=0
    while [ "$(date +%s)" -lt "$end" ]; do
      r=$((r + 1)); log="$out/jvm$j-run$r.log"; t0=$(date +%s)
      timeout -s QUIT -k 20 "$limit" "$java" -Xss4m -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
        -Dorg.bytedeco.javacpp.cachedir="${TMPDIR:-/tmp}/javacpp-cache" ${REPEAT_JOPTS:-} -jar "$launcher" execute \
        --class-path "$cp_libs$cp_tests" "${select[@]}" --details=testfeed --disable-banner > "$log" 2>&1
      rc=$?
      echo "jvm$j run$r exit $rc $(( $(date +%s) - t0 ))s" >> "$out/summary.txt"
      [ "$rc" -eq 0 ] && rm -f "$log"
    done
  ) &
done
wait
runs=$(wc -l < "$out/summary.txt")
bad=$(grep -vc " exit 0 " "$out/summary.txt")
echo "repeat-tests: $runs runs of [$classes] in $jvms JVMs, $bad not passing (logs kept in $out)"
