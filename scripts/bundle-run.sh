#!/usr/bin/env bash
# run.sh of the offline GPU bundle. Usage: run.sh <out-dir> [steps...]
#   steps: tests      the whole test suite (GPU tests included) with JUnit XML reports
#          sanitizer  the GPU-tagged tests under compute-sanitizer (memcheck; SANITIZER_TOOLS to change)
#          bench      the benchmark sweeps (BENCH_ARGS, e.g. "--quick --op bmm")
#          info       gapfill info
#   default: info tests sanitizer bench
# CUDA libraries are found in $GAPFILL_CUDA_LIBS, /usr/local/cuda/lib64 and the system library path.
# Writes <out-dir>/validation/<gpu>.json, benchmarks/<gpu>/*.json|md, reports/, logs.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh <out-dir> [steps...]}; shift
steps=${*:-info tests sanitizer bench}
mkdir -p "$out/reports" "$out/validation" "$out/benchmarks"
export LD_LIBRARY_PATH=${GAPFILL_CUDA_LIBS:+$GAPFILL_CUDA_LIBS:}/usr/local/cuda/lib64:/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
java="$here/jre/bin/java"
. "$here/BUNDLE_INFO"
cp_libs=$(ls "$here"/lib/*.jar | grep -v console-standalone | tr '\n' ':')
cp_tests=$(ls -d "$here"/tests/*/ | sed 's#/$##' | tr '\n' ':')
launcher=$(ls "$here"/lib/junit-platform-console-standalone-*.jar)
jopts="-Xss4m -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.bytedeco.javacpp.cachedir=${TMPDIR:-/tmp}/javacpp-cache"
cli() { "$java" $jopts -cp "$cp_libs" dev.gapfill.examples.GapfillCli "$@"; }
sanitizer_args=()
rc=0
for step in $steps; do
  case $step in
    info) cli info | tee "$out/info.txt" ;;
    tests)
      "$java" $jopts -jar "$launcher" execute --class-path "$cp_libs$cp_tests" --scan-class-path "${cp_tests%:}" \
        --include-classname '.*(Test|Tests|Properties)$' --reports-dir "$out/reports" --details=tree --disable-banner 2>&1 | tee "$out/tests.log" | grep -E "✘|MethodSource|tests (successful|failed|skipped|found)|containers failed" | head -80
      [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1 ;;
    sanitizer)
      for tool in ${SANITIZER_TOOLS:-memcheck}; do
        log="$out/sanitizer-$tool.log"
        compute-sanitizer --tool "$tool" --log-file "$log" --print-limit 50 \
          "$java" $jopts -jar "$launcher" execute --class-path "$cp_libs$cp_tests" --scan-class-path "${cp_tests%:}" \
          --include-classname '.*(Test|Tests|Properties)$' --include-tag gpu --exclude-tag expected-api-error --reports-dir "$out/reports-sanitizer-$tool" --details=summary --disable-banner > "$out/sanitizer-$tool.out" 2>&1
        src=$?
        # memcheck/initcheck/synccheck print "ERROR SUMMARY: N errors"; racecheck "RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)"
        errs=$( (grep -Eo "ERROR SUMMARY: [0-9]+" "$log"; grep -Eo "\([0-9]+ errors" "$log") | tail -1 | grep -Eo "[0-9]+" || echo "?")
        tail -3 "$out/sanitizer-$tool.out"; echo "compute-sanitizer $tool: ${errs} errors (exit $src)"
        sanitizer_args+=(--sanitizer "$tool=$errs:exit-$src")
        [ "$errs" = "0" ] || rc=1
      done ;;
    bench)
      GAPFILL_COMMIT=$commit cli bench --out "$out/benchmarks" ${BENCH_ARGS:-} 2>&1 | tee "$out/bench.log" | grep -vE "^\s*$" | tail -60
      [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1 ;;
    *) echo "unknown step $step"; rc=2 ;;
  esac
done
if [ -n "$(ls "$out"/reports/*.xml 2>/dev/null)" ]; then
  cli validation-record --reports "$out/reports" --out "$out/validation" --commit "$commit" --dirty="$dirty" "${sanitizer_args[@]}" || rc=1
fi
exit $rc
