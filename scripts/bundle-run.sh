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
      # one launcher per module, each bounded, so a hang in one cannot take the others' reports with it
      for dir in "$here"/tests/*/; do
        m=$(basename "$dir")
        timeout "${TESTS_TIMEOUT:-200}" "$java" $jopts -jar "$launcher" execute --config=junit.jupiter.execution.timeout.default=150s \
          --class-path "$cp_libs$cp_tests" --scan-class-path "${dir%/}" --include-classname '.*(Test|Tests|Properties)$' \
          --reports-dir "$out/reports/$m" --details=testfeed --disable-banner > "$out/tests-$m.log" 2>&1
        trc=$?
        echo "tests[$m]: exit $trc $( [ $trc -eq 124 ] && echo '(TIMED OUT)')"
        grep -E "tests (successful|failed|skipped|aborted)" "$out/tests-$m.log" | tr -s ' ' | tr '\n' ' '; echo
        grep -E "FAILED|ABORTED" "$out/tests-$m.log" | head -20
        [ $trc -eq 0 ] || rc=1
      done
      cat "$out"/tests-*.log > "$out/tests.log" ;;
    sanitizer)
      # SANITIZER_SCOPE: test modules to run under the sanitizer (default: all)
      san_scope=$(for m in ${SANITIZER_SCOPE:-$(ls "$here/tests")}; do printf '%s:' "$here/tests/$m"; done); san_scope=${san_scope%:}
      for tool in ${SANITIZER_TOOLS:-memcheck}; do
        log="$out/sanitizer-$tool.log"
 timeout "${SANITIZER_TIMEOUT:-300}" compute-sanitizer --tool "$tool" --log-file "$log" --print-limit 50 \
          "$java" $jopts -jar "$launcher" execute --class-path "$cp_libs$cp_tests" --scan-class-path "$san_scope" \
          --config=junit.jupiter.execution.timeout.default=180s --include-classname '.*(Test|Tests|Properties)$' --include-tag gpu --exclude-tag expected-api-error --reports-dir "$out/reports-sanitizer-$tool" --details=summary --disable-banner > "$out/sanitizer-$tool.out" 2>&1
        src=$?
        # memcheck/initcheck/synccheck print "ERROR SUMMARY: N errors"; racecheck "RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)"
        errs=$( { grep -Eo "ERROR SUMMARY: [0-9]+|\([0-9]+ errors" "$log" || true; } | tail -1 | grep -Eo "[0-9]+" | head -1)
        errs=${errs:-?}
        tail -3 "$out/sanitizer-$tool.out"; echo "compute-sanitizer $tool: ${errs} errors (exit $src)"
        sanitizer_args+=(--sanitizer "$tool=$errs:exit-$src")
        [ "$errs" = "0" ] || rc=1
      done ;;
    bench)
      GAPFILL_COMMIT=$commit timeout "${BENCH_TIMEOUT:-400}" "$java" $jopts -cp "$cp_libs" dev.gapfill.examples.GapfillCli bench --out "$out/benchmarks" ${BENCH_ARGS:-} 2>&1 | tee "$out/bench.log" | grep -vE "^\s*$" | tail -60
      [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1 ;;
    *) echo "unknown step $step"; rc=2 ;;
  esac
done
if [ -n "$(find "$out/reports" -name '*.xml' 2>/dev/null | head -1)" ]; then
  cli validation-record --reports "$out/reports" --out "$out/validation" --commit "$commit" --dirty="$dirty" "${sanitizer_args[@]}" || rc=1
fi
exit $rc
