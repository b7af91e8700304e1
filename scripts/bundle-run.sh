#!/usr/bin/env bash
# run.sh of the offline GPU bundle. Usage: run.sh <out-dir> [steps...]
#   steps: tests      the whole test suite (GPU tests included) with JUnit XML reports; TESTS_TIMEOUT seconds per
#                     module (default 520: verify took 443 s and 461 s on one H100 beside the stress and the four
#                     tools at 8fc4064 and e86bf38, where 450 s sent its SIGQUIT thread dump 11 s before the end; a
#                     200 s default stopped it on an idle H100 at fdc42e2). TESTS_CLASSES: a regex on the full class
#                     name (default every *Test|Tests|Properties), e.g. '.*verify\.BmmGpuTest' for one class; the
#                     record then holds only those tests (a module without a match reports none)
#          sanitizer  the GPU-tagged tests under compute-sanitizer, one process per tool:
#                     SANITIZER_TOOLS    tools (default "memcheck racecheck initcheck synccheck")
#                     SANITIZER_SCOPE    test modules (default "core ops verify")
#                     SANITIZER_TIMEOUT  seconds per tool process (default 300); 30 s before it (at 3/4 of limits up to
#                                        120 s) the process's JVM gets SIGQUIT, so a hang leaves its thread dump in
#                                        sanitizer-<entry>.out
#                     SANITIZER_CLASSES  test classes, a regex on the full name (default every *Test|Tests|Properties);
#                                        racecheck and synccheck over verify take more than one 10-minute call, so
#                                        shard them: e.g. '.*verify.(Bmm|Int8Mm)GpuTest' in one call, the rest in another
#                     SANITIZER_TRIES_SCALE  e.g. 0.25: the GPU jqwik properties run that fraction of their tries under
#                                        the tools (GpuTriesHook), and fixed grids that the tools cannot get through
#                                        keep a subset reaching every kernel variant (Int8MmGpuTest: 12 of 72 shapes);
#                                        unset, every try and case runs
#                     SANITIZER_ARGS     extra compute-sanitizer options for every tool, e.g. a kernel-name filter so
#                                        that only Gapfill's kernels are instrumented (check the spelling with
#                                        `compute-sanitizer --help` on the device); named in the record's scope
#                     SANITIZER_PARALLEL 1 (default): the tools run at the same time as separate processes on the
#                                        one GPU (each process is instrumented on its own); 0: one after another
#                     Shards: an entry "tool/name" of SANITIZER_TOOLS is one more process of that tool, over the
#                                        classes SANITIZER_SHARDS gives it ("name=<regex> ..."); the record keeps it
#                                        under "tool/name". So racecheck over verify can run as two processes at once.
#                                        A shard "name=methods:<class>#<method>(<types>)|..." runs those test methods
#                                        only (types without spaces, e.g. "(int,int,int)"; no classpath scan)
#                     SANITIZER_GPUS     "entry=<CUDA_VISIBLE_DEVICES> ...": on a host of several GPUs, the device order
#                                        of one tool process, e.g. "racecheck=1,0" (its tests then run on GPU 1 and the
#                                        two-GPU tests still see both); entries not named keep the default order
#                     SANITIZER_JOPTS    "entry=<-Dname=value>[,<-Dname=value>...] ...": JVM options of one tool process,
#                                        e.g. "racecheck/i0=-Dgapfill.test.slice=0/3" (core's GpuTestSlice: that process
#                                        runs every third case of the grids that honour it); named in the record's scope
#                     SANITIZER_TEST_TIMEOUT  JUnit's per-test time limit under the tools (default 180s)
#                     SANITIZER_GAPFILL_ONLY  entries whose tool instruments Gapfill's own kernels only (compute-sanitizer
#                                        --kernel-name regex=$gapfill_kernels): e.g. "initcheck/d" over the depthwise
#                                        class, since initcheck instruments cuDNN's engine kernels into an illegal
#                                        address. Not over the whole suite: the tool then misses the stores of the
#                                        uninstrumented vendor kernels and reports our kernels that read their results
#                                        as reading uninitialized memory, unless InitcheckAid zeroes those buffers first
#                                        (it does for the vendor GEMM outputs and, since 61a546a, gqaDecode's cuDNN
#                                        softmax output; docs/reliability.md)
#                     A tool process's JVM still alive once the tool has ended is ended too (SIGTERM, then SIGKILL):
#                                        its status reads "<status>-jvm-outlived-tool", never clean
#          stress     gapfill stress (STRESS_SECONDS per phase, default 300; STRESS_TIMEOUT) into <out-dir>/stress.json
#          checks     tests, sanitizer and stress at the same time (all three check correctness, none is timed), one
#                     record; SANITIZER_* and STRESS_* as above, STRESS_SECONDS=0 leaves the stress out
#                     CHECKS_TESTS=0 leaves the tests out (with REPORTS_FROM naming a call of this commit that ran them:
#                     on two H100s the suite no longer finishes beside the 24 tool processes within one call)
#          bench      the benchmark sweeps (BENCH_ARGS, e.g. "--quick --op bmm" or "--dtype F32"); BENCH_OPS="bmm:120 gqa_decode:200 ..." runs
#                     each op in its own process with its own time limit (else one process, BENCH_TIMEOUT);
#                     BENCH_RESUME_FROM=<dir of <gpu>/<op>.json> continues the incomplete sweeps there measured at this
#                     commit (bench --resume) instead of starting over. Each sweep's JSON lists the steps the
#                     bundle ran on this machine before it ("machine_history"; GAPFILL_MACHINE_HISTORY_FILE, default
#                     $TMPDIR/gapfill-machine-history, kept while the machine stays warm). Before it starts (and
#                     before the demo) the step waits up to GPU_QUIET_WAIT s (default 60) for the GPUs to have no
#                     other compute process (nvidia-smi); what it waited for or still found goes into that history
#          (every step) GAPFILL_JOPTS: JVM options for every Java process of the bundle, e.g.
#                     "-Dgapfill.debug.deviceAs=a100" (core's DeviceInfo.asProfile: the heuristics choose for an A100 on the
#                     GPU at hand; with CUDA_FORCE_PTX_JIT=1 the kernels run from the compute_80 PTX, cuDNN then cannot
#                     run). Results of such a run are named <gpu>-as-<profile> (records, sweeps), never the GPU's own.
#          info       gapfill info
#          demo       gapfill demo (DEMO_ARGS, DEMO_TIMEOUT): the MoE layer and the decode step, into <out-dir>/demo/
#          repeat     runs test classes over and over in several JVMs at once, to catch a rare hang or failure:
#                     REPEAT_CLASSES (required, space-separated), REPEAT_JVMS (default 6), REPEAT_SECONDS (default 220),
#                     REPEAT_LIMIT (seconds per run, default 100: then SIGQUIT, so the run's log gets every thread's
#                     stack, and SIGKILL 20 s later), REPEAT_JOPTS (JVM options of every run). Into <out-dir>/repeat/:
#                     summary.txt ("jvm<j> run<r> exit <rc> <s>s tests <n>" a line; a run where no test passed
#                     counts as exit 3) and the logs of the runs that did not pass
#   default: info tests sanitizer bench
# REPORTS_FROM=<earlier out-dir>: the validation record also takes that run's JUnit reports (modules this run did not
# test), validation-rules summary and sanitizer results (tool entries this run did not run), but only if that run
# tested this same commit (its reports/COMMIT); so the tests of one call and the sanitizer of the next make one record.
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
# what the sweeps, the stress and the demo record as their commit: a dirty tree's results are another code's, so its
# files say so ("<commit>-dirty") and bench --resume, which continues only files of the same commit string, keeps them apart
code_commit=$commit; [ "${dirty:-}" = true ] && code_commit="$commit-dirty"
cp_libs=$(ls "$here"/lib/*.jar | grep -v console-standalone | tr '\n' ':')
cp_tests=$(ls -d "$here"/tests/*/ | sed 's#/$##' | tr '\n' ':')
launcher=$(ls "$here"/lib/junit-platform-console-standalone-*.jar)
jopts="-Xss4m -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.bytedeco.javacpp.cachedir=${TMPDIR:-/tmp}/javacpp-cache${GAPFILL_JOPTS:+ $GAPFILL_JOPTS}"
cli() { "$java" $jopts -cp "$cp_libs" dev.gapfill.examples.GapfillCli "$@"; }
sanitizer_args=()
rc=0
run_tests() {
      # one launcher per module, each bounded, so a hang in one cannot take the others' reports with it
      for dir in "$here"/tests/*/; do
        m=$(basename "$dir")
        rm -rf "$out/reports/$m"  # no report of an earlier run in this out-dir is counted as this one's
        # at its limit the JVM gets SIGQUIT first: every thread's stack goes into the module's log, then it is killed
        GAPFILL_COMMIT=$commit timeout -s QUIT -k 30 "${TESTS_TIMEOUT:-520}" "$java" $jopts -Dgapfill.validationSummary="$out/validation-rules-$m.json" -jar "$launcher" execute \
          --config=junit.jupiter.execution.timeout.default=150s \
          --class-path "$cp_libs$cp_tests" --scan-class-path "${dir%/}" --include-classname "${TESTS_CLASSES:-.*(Test|Tests|Properties)\$}" \
          --reports-dir "$out/reports/$m" --details=testfeed --disable-banner > "$out/tests-$m.log" 2>&1
        trc=$?
        mkdir -p "$out/reports/$m" && echo "$trc" > "$out/reports/$m/EXIT"  # the record names a module that did not finish cleanly
        echo "tests[$m]: exit $trc $( { [ $trc -eq 124 ] || [ $trc -eq 137 ]; } && echo '(TIMED OUT: thread dump in tests-'"$m"'.log)')"
        grep -E "tests (successful|failed|skipped|aborted)" "$out/tests-$m.log" | tr -s ' ' | tr '\n' ' '; echo
        grep -E "FAILED|ABORTED" "$out/tests-$m.log" | head -20
        [ $trc -eq 0 ] || rc=1
      done
      cat "$out"/tests-*.log > "$out/tests.log"
      echo "$commit" > "$out/reports/COMMIT"
      echo "$dirty" > "$out/reports/DIRTY"
      gpu_names > "$out/reports/GPUS"
      run_profile > "$out/reports/PROFILE"
      if [ -n "${TESTS_CLASSES:-}" ]; then echo "$TESTS_CLASSES" > "$out/reports/FILTER"; else rm -f "$out/reports/FILTER"; fi
}
# The machine's GPUs by name, one list (a later call merges a run's reports only from the same kind of machine: a record
# named after an H200 must not hold an H100's suite)
# What the run described the GPUs as and which image ran (GAPFILL_JOPTS, CUDA_FORCE_PTX_JIT): reports merge only from a
# run of the same profile, so a device-profile run (gapfill.debug.deviceAs) never lands in the GPU's own record
run_profile() { printf 'jopts=%s;ptxjit=%s\n' "${GAPFILL_JOPTS:-}" "${CUDA_FORCE_PTX_JIT:-}"; }
gpu_names() {
  { command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | tr '\n' ';'; } || echo unknown
}
# Other processes computing on the GPUs, as nvidia-smi lists them ("pid, name;" each; nothing where it is missing or
# lists none, e.g. a container that cannot see other PID namespaces)
gpu_compute_apps() {
  command -v nvidia-smi >/dev/null || return 0
  # only "pid, name" lines: a failing nvidia-smi prints its complaint on stdout
  nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader 2>/dev/null | grep -E '^[0-9]+, ' | tr '\n' ';'
}
# Before a timed step (bench, demo): waits up to GPU_QUIET_WAIT seconds (default 60) for the GPUs to have no other
# compute process, since another context's work stretches every time that waits for the GPU (a sanitizer's JVM that
# outlived its step did, at 6167c12). Prints what it waited for or still found (nothing when the GPUs were free).
gpu_quiet() {
  local apps waited=0 limit=${GPU_QUIET_WAIT:-60}
  apps=$(gpu_compute_apps)
  [ -z "$apps" ] && return 0
  local first=$apps
  while [ -n "$apps" ] && [ $waited -lt "$limit" ]; do sleep 1; waited=$((waited + 1)); apps=$(gpu_compute_apps); done
  if [ -z "$apps" ]; then echo "waited ${waited} s for other GPU processes to end (${first%;})"
  else echo "other GPU processes still running after ${waited} s, timings may be disturbed (${apps%;})"; fi
}
san_setup() {
      san_tools=${SANITIZER_TOOLS:-memcheck racecheck initcheck synccheck}
      san_modules=${SANITIZER_SCOPE:-core ops verify}
      san_timeout=${SANITIZER_TIMEOUT:-300}
      san_scope=$(for m in $san_modules; do printf '%s:' "$here/tests/$m"; done); san_scope=${san_scope%:}
      san_label=$(san_scope_label)
}
# The value of key in a "key=value key=value" list (empty when absent; values may hold regex characters: no globbing,
# and it runs in a command substitution, so the set -f stays there).
map_get() { local kv; set -f; for kv in $1; do [ "${kv%%=*}" = "$2" ] && { printf '%s' "${kv#*=}"; return; }; done; }
# An entry of SANITIZER_TOOLS: "tool" or "tool/shard"; files are named by the entry with / as -.
san_file() { printf '%s' "${1//\//-}"; }
san_classes() {
  local shard
  if [ "${1#*/}" != "$1" ]; then shard=${1#*/}; map_get "${SANITIZER_SHARDS:-}" "$shard"
  else printf '%s' "${SANITIZER_CLASSES:-.*(Test|Tests|Properties)\$}"; fi
}
# Every kernel of cuda-native starts with one of these (extern "C" names, so the mangled name is the name);
# BundleRunScriptTest checks each __global__ of cuda-native/src/main/cuda against it.
gapfill_kernels='^(bmm_|dwconv3x3_|gg_|gqa_|grouped_gemm|int8_mm_|moe_|scale_add_|l2_flush_|fault_for_tests)'
# The entry's own JVM options (SANITIZER_JOPTS, commas between options), space-separated.
san_jopts() { map_get "${SANITIZER_JOPTS:-}" "$1" | tr ',' ' '; }
# Is the entry one of SANITIZER_GAPFILL_ONLY?
san_gapfill_only() { local e; for e in ${SANITIZER_GAPFILL_ONLY:-}; do [ "$e" = "$1" ] && return 0; done; return 1; }
# The record's scope of an entry: modules, classes (a shard's, else SANITIZER_CLASSES), tries, options, device order
# and kernel filter; without an entry, what the step's processes share.
san_scope_label() {
  local classes=${SANITIZER_CLASSES:-} gpus= jvm=
  if [ -n "${1:-}" ]; then
    [ "${1#*/}" != "$1" ] && classes=$(san_classes "$1")
    gpus=$(map_get "${SANITIZER_GPUS:-}" "$1"); jvm=$(san_jopts "$1")
  fi
  printf '%s' "$(echo $san_modules | tr ' ' '+')${classes:+, classes $classes}${SANITIZER_TRIES_SCALE:+, jqwik tries x$SANITIZER_TRIES_SCALE}${jvm:+, JVM $jvm}${SANITIZER_ARGS:+, options $SANITIZER_ARGS}${gpus:+, CUDA_VISIBLE_DEVICES=$gpus}"
  if [ -n "${1:-}" ] && san_gapfill_only "$1"; then printf ', Gapfill kernels only (%s)' "$gapfill_kernels"; fi
}
# One process per entry of SANITIZER_TOOLS; initcheck's JVM runs with -Dgapfill.debug.initcheck=true (core's
# InitcheckAid: vendor GEMM outputs zeroed first, since the tool cannot see cuBLAS's stores). --error-exitcode makes a
# run with sanitizer errors exit 86, whatever the tests did.
san_one() {
  local entry=$1 tool=${1%%/*} f t0 classes gpus filter=(); t0=$(date +%s); f=$(san_file "$1")
  classes=$(san_classes "$entry"); gpus=$(map_get "${SANITIZER_GPUS:-}" "$entry")
  san_gapfill_only "$entry" && filter=(--kernel-name "regex=$gapfill_kernels")
  # a shard "methods:<class>#<method>(<types>)|..." selects those test methods instead of scanning for classes
  local select=(--scan-class-path "$san_scope" --include-classname "$classes") m ms
  if [ "${classes#methods:}" != "$classes" ]; then
    select=(); IFS='|' read -ra ms <<< "${classes#methods:}"; for m in "${ms[@]}"; do select+=(--select-method "$m"); done
  fi
  if [ -z "$classes" ]; then echo "255 0" > "$out/sanitizer-$f.status"; echo "shard $entry: no classes in SANITIZER_SHARDS" > "$out/sanitizer-$f.out"; return; fi
  rm -rf "$out/reports-sanitizer-$f"
  # Shortly before the limit the tool's JVM (marked by -Dgapfill.sanitizer.entry) gets SIGQUIT: a process that hangs
  # leaves every thread's stack in sanitizer-<entry>.out. The watchdog holds no output of ours, so nothing waits on it.
  local wait_s=$(( san_timeout > 120 ? san_timeout - 30 : san_timeout * 3 / 4 )) watchdog rc left
  ( sleep "$wait_s" && for p in $(san_jvms "$f"); do kill -QUIT "$p"; done ) > /dev/null 2>&1 &
  watchdog=$!
  ${gpus:+env CUDA_VISIBLE_DEVICES=$gpus} \
  timeout -k 15 "$san_timeout" compute-sanitizer --tool "$tool" --error-exitcode 86 --log-file "$out/sanitizer-$f.log" \
    --print-limit 50 ${SANITIZER_ARGS:-} "${filter[@]}" "$java" -Dgapfill.sanitizer.entry="$f" $jopts $(san_jopts "$entry") ${SANITIZER_TRIES_SCALE:+-Dgapfill.test.gpuTriesScale=$SANITIZER_TRIES_SCALE} $( [ "$tool" = initcheck ] && echo -Dgapfill.debug.initcheck=true -Dorg.slf4j.simpleLogger.log.dev.gapfill.core.InitcheckAid=info ) -jar "$launcher" execute --class-path "$cp_libs$cp_tests" "${select[@]}" \
    --config=junit.jupiter.execution.timeout.default=${SANITIZER_TEST_TIMEOUT:-180s} --include-tag gpu \
    --exclude-tag expected-api-error --reports-dir "$out/reports-sanitizer-$f" --details=testfeed --disable-banner \
    > "$out/sanitizer-$f.out" 2>&1
  rc=$?
  kill "$watchdog" 2>/dev/null
  # The tool's front end can end while the JVM it ran still runs: at 6167c12 on an H200, racecheck ended ("couldn't find
  # exit code") a second after the watchdog's SIGQUIT, and its JVM ran 37 s more, beside the demo step that followed
  # (docs/reliability/leftover-tool-jvm-h200-6167c12.txt). No JVM outlives its entry; the status says it had to go.
  left=$(san_jvms "$f")
  if [ -n "$left" ]; then
    san_end_jvms "$f"
    echo "sanitizer $entry: its JVM (pid $(echo $left)) outlived compute-sanitizer and was ended" >> "$out/sanitizer-$f.out"
  fi
  echo "$rc $(( $(date +%s) - t0 ))${left:+ leftover}" > "$out/sanitizer-$f.status"
}
# The processes of one entry's JVM still alive: marked -Dgapfill.sanitizer.entry=<file name>; timeout and the tool's
# front end carry the mark on their command lines too and are left out.
san_jvms() {
  local p
  for p in $(pgrep -f -- "-Dgapfill.sanitizer.entry=$1( |\$)"); do
    case $(ps -o comm= -p "$p" 2>/dev/null) in ''|timeout|compute-sanit*) ;; *) echo "$p" ;; esac
  done
}
# Ends them: SIGTERM, then SIGKILL after 10 s, and waits (up to 20 s more) until none is left.
san_end_jvms() {
  local n=0
  kill -TERM $(san_jvms "$1") 2>/dev/null
  while [ -n "$(san_jvms "$1")" ] && [ $n -lt 20 ]; do sleep 0.5; n=$((n + 1)); done
  kill -KILL $(san_jvms "$1") 2>/dev/null
  while [ -n "$(san_jvms "$1")" ] && [ $n -lt 60 ]; do sleep 0.5; n=$((n + 1)); done
}
san_run() {
      if [ "${SANITIZER_PARALLEL:-1}" = "1" ]; then
        for tool in $san_tools; do san_one "$tool" & done
        wait
      else
        for tool in $san_tools; do san_one "$tool"; done
      fi
}
san_summary() {
      for entry in $san_tools; do
        tool=${entry%%/*}; f=$(san_file "$entry")
        log="$out/sanitizer-$f.log"
        src=255; secs=0; leftover=
        [ -f "$out/sanitizer-$f.status" ] && read -r src secs leftover < "$out/sanitizer-$f.status"
        # Every process the tool followed prints one summary: memcheck/initcheck/synccheck "ERROR SUMMARY: N errors",
        # racecheck "RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)". Sum them all; no summary at all
        # means the run did not finish (errors unknown, never reported as 0).
        if [ "$tool" = racecheck ]; then pat='RACECHECK SUMMARY: .*\([0-9]+ error'; else pat='ERROR SUMMARY: [0-9]+ error'; fi
        counts=$( { grep -Eo "$pat" "$log" 2>/dev/null || true; } | grep -Eo "[0-9]+ error" | grep -Eo "[0-9]+" )
        if [ -n "$counts" ]; then errs=$(echo "$counts" | awk '{ s += $1 } END { print s }'); else errs="?"; fi
        case $src in
          0) status=ok ;;
          86) status=errors ;;
          124|137) status="timeout-${san_timeout}s" ;;
          1) status=tests-failed ;;
          *) status="exit-$src" ;;
        esac
        # a JVM that outlived the tool: whatever the tool said, its run did not end as the tool reported
        [ -n "$leftover" ] && status="$status-jvm-outlived-tool"
        tail -3 "$out/sanitizer-$f.out"
        # the tool's own failures, with the launch it names
        grep -A6 "Internal Sanitizer Error" "$log" 2>/dev/null | head -14
        grep -E "^=+ +(at |by thread|Address)" "$log" 2>/dev/null | sed -E 's/\+0x[0-9a-f]+//' | sort | uniq -c | sort -rn | head -8
        label=$(san_scope_label "$entry")
        echo "compute-sanitizer $entry: $errs errors, $status (exit $src, ${secs}s, scope $label)"
        sanitizer_args+=(--sanitizer "$entry=errors=$errs;status=$status;exit=$src;seconds=$secs;scope=$label;reports=$out/reports-sanitizer-$f")
        { [ "$errs" = "0" ] && [ "$src" = "0" ] && [ -z "$leftover" ]; } || rc=1
      done
}
run_repeat() {
  local classes=${REPEAT_CLASSES:?repeat: REPEAT_CLASSES names the test classes} jvms=${REPEAT_JVMS:-6} select=() c j end
  local limit=${REPEAT_LIMIT:-100} dir="$out/repeat"
  for c in $classes; do select+=(--select-class "$c"); done
  mkdir -p "$dir"; : > "$dir/summary.txt"; end=$(( $(date +%s) + ${REPEAT_SECONDS:-220} ))
  for j in $(seq 1 "$jvms"); do
    (
      r=0
      # every JVM runs at least once, however short the time (a whole-second clock could end it before the first run)
      while [ "$r" -eq 0 ] || [ "$(date +%s)" -lt "$end" ]; do
        r=$((r + 1)); log="$dir/jvm$j-run$r.log"; t0=$(date +%s)
        timeout -s QUIT -k 20 "$limit" "$java" $jopts ${REPEAT_JOPTS:-} -jar "$launcher" execute \
          --class-path "$cp_libs$cp_tests" "${select[@]}" --details=testfeed --disable-banner > "$log" 2>&1
        trc=$?
        # a run whose classes ran no test did not pass (exit 3): a passing run's log is removed, so count here
        n=$(grep -oE '[0-9]+ tests successful' "$log" | grep -oE '^[0-9]+' | tail -1)
        [ "$trc" -eq 0 ] && [ "${n:-0}" -eq 0 ] && trc=3
        echo "jvm$j run$r exit $trc $(( $(date +%s) - t0 ))s tests ${n:-0}" >> "$dir/summary.txt"
        [ "$trc" -eq 0 ] && rm -f "$log"
      done
    ) &
  done
  wait
  local runs bad; runs=$(wc -l < "$dir/summary.txt"); bad=$(grep -vc " exit 0 " "$dir/summary.txt")
  echo "repeat: $runs runs of [$classes] in $jvms JVMs${REPEAT_JOPTS:+ ($REPEAT_JOPTS)}, $bad not passing"
  [ "$bad" -eq 0 ] || rc=1
}
run_stress() {
  GAPFILL_COMMIT=$code_commit timeout "${STRESS_TIMEOUT:-520}" "$java" $jopts -cp "$cp_libs" dev.gapfill.examples.GapfillCli stress \
    --seconds "${STRESS_SECONDS:-300}" --out "$out/stress.json" > "$out/stress.log" 2>&1
  echo "stress: exit $?"; grep -E '"(ops|wrong_results|errors|memory_back_to_baseline)"' "$out/stress.log" | tr -s ' ' | tr '\n' ' '; echo
}
# What ran on this machine before each step, kept across calls while the machine stays warm: a bench step hands the
# lines before it to the sweep, which writes them into its JSON ("machine_history"). The bmm sweeps at ea114de timed
# AUTO 0.2 us above the custom column after the GPU suite and sanitizers and 0.16 us below it alone (docs/ops/bmm.md).
history_file=${GAPFILL_MACHINE_HISTORY_FILE:-${TMPDIR:-/tmp}/gapfill-machine-history}
for step in $steps; do
  machine_history=$(tail -n 40 "$history_file" 2>/dev/null | paste -sd ';' -)
  case $step in
    checks) what="checks: tests, sanitizer ${SANITIZER_TOOLS:-memcheck racecheck initcheck synccheck}, stress ${STRESS_SECONDS:-300}s" ;;
    sanitizer) what="sanitizer ${SANITIZER_TOOLS:-memcheck racecheck initcheck synccheck}" ;;
    bench) what="bench ${BENCH_OPS:-${BENCH_ARGS:-all}}" ;;
    stress) what="stress ${STRESS_SECONDS:-300}s" ;;
    *) what=$step ;;
  esac
  # a timed step starts on GPUs free of other processes, or says (log, history, the sweep's JSON) what shared them
  quiet=""
  case $step in bench|demo) quiet=$(gpu_quiet) ;; esac
  if [ -n "$quiet" ]; then
    echo "$step: $quiet"; what="$what ($quiet)"
    machine_history="${machine_history:+$machine_history;}$(date -u +%Y-%m-%dT%H:%M:%SZ) ${commit:0:12} $step, at its start: $quiet"
  fi
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) ${commit:0:12} $what" >> "$history_file" 2>/dev/null
  export GAPFILL_MACHINE_HISTORY="$machine_history"
  case $step in
    info) cli info | tee "$out/info.txt" ;;
    tests) run_tests ;;
    sanitizer)
      san_setup
      if ! command -v compute-sanitizer >/dev/null 2>&1; then
        echo "compute-sanitizer not found: sanitizer step not run"
        for tool in $san_tools; do sanitizer_args+=(--sanitizer "$tool=errors=?;status=unavailable;scope=$san_label"); done
        rc=1; continue
      fi
      san_run
      san_summary ;;
    repeat) run_repeat ;;
    stress) run_stress | tee "$out/stress-summary.txt"; grep -q "exit 0" "$out/stress-summary.txt" || rc=1 ;;
    checks)
      san_setup
      have_san=1; command -v compute-sanitizer >/dev/null 2>&1 || { echo "compute-sanitizer not found"; have_san=0; rc=1; }
      [ $have_san = 1 ] && { san_run & san_pid=$!; }
      [ "${STRESS_SECONDS:-300}" != "0" ] && { run_stress > "$out/stress-summary.txt" 2>&1 & stress_pid=$!; }
      # CHECKS_TESTS=0: the suite ran in an earlier call of this commit, whose reports REPORTS_FROM brings in
      [ "${CHECKS_TESTS:-1}" = 0 ] || run_tests
      [ -n "${san_pid:-}" ] && wait "$san_pid"
      [ -n "${stress_pid:-}" ] && { wait "$stress_pid"; cat "$out/stress-summary.txt"; grep -q "exit 0" "$out/stress-summary.txt" || rc=1; }
      if [ $have_san = 1 ]; then san_summary; else
        for tool in $san_tools; do sanitizer_args+=(--sanitizer "$tool=errors=?;status=unavailable;scope=$san_label"); done
      fi ;;
    bench)
      bench_resume=""
      if [ -n "${BENCH_RESUME_FROM:-}" ]; then
        # continue incomplete sweeps of this commit: earlier files (e.g. the repo's docs/benchmarks, carried in the tree)
        cp -r "$BENCH_RESUME_FROM"/. "$out/benchmarks/" && bench_resume="--resume"
      fi
      if [ -n "${BENCH_OPS:-}" ]; then
        # one process per op, each with its own time limit (op:seconds); a sweep cut off keeps its checkpointed rows.
        # Each op's history also names the ops of this step that ran before it (the machine ran them just before).
        op_history=$machine_history
        for spec in $BENCH_OPS; do
          op=${spec%%:*}; lim=${spec##*:}; t0=$(date +%s)
          GAPFILL_MACHINE_HISTORY="$op_history" GAPFILL_COMMIT=$code_commit timeout "$lim" "$java" $jopts -cp "$cp_libs" dev.gapfill.examples.GapfillCli bench --op "$op" \
            --out "$out/benchmarks" $bench_resume ${BENCH_ARGS:-} > "$out/bench-$op.log" 2>&1
          brc=$?
          rows=$(grep -o '"regime"' "$out"/benchmarks/*/"$op".json 2>/dev/null | wc -l)  # once a row ("op" is also a key of host_overhead's shapes)
          echo "bench $op: exit $brc$( [ $brc -eq 124 ] && echo ' (time limit: incomplete sweep)'), $(( $(date +%s) - t0 ))s, $rows rows"
          [ $brc -eq 0 ] || rc=1
          op_history="${op_history:+$op_history;}$(date -u +%Y-%m-%dT%H:%M:%SZ) ${commit:0:12} bench $spec (this step)"
        done
      else
        GAPFILL_COMMIT=$code_commit timeout "${BENCH_TIMEOUT:-400}" "$java" $jopts -cp "$cp_libs" dev.gapfill.examples.GapfillCli bench --out "$out/benchmarks" $bench_resume ${BENCH_ARGS:-} 2>&1 | tee "$out/bench.log" | grep -vE "^\s*$" | tail -60
        [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
      fi ;;
    demo)
      GAPFILL_COMMIT=$code_commit timeout "${DEMO_TIMEOUT:-300}" "$java" $jopts -cp "$cp_libs" dev.gapfill.examples.GapfillCli demo --out "$out/demo" ${DEMO_ARGS:-} 2>&1 | tee "$out/demo.log" | tail -30
      [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1 ;;
    *) echo "unknown step $step"; rc=2 ;;
  esac
done
if [ -n "${REPORTS_FROM:-}" ]; then
  # the same commit and the same dirty flag (a dirty tree's results are another code's; a run without the flag: unknown)
  if [ "$(cat "$REPORTS_FROM/reports/COMMIT" 2>/dev/null)" = "$commit" ] \
     && [ "$(cat "$REPORTS_FROM/reports/DIRTY" 2>/dev/null || echo unknown)" = "$dirty" ] \
     && [ "$(cat "$REPORTS_FROM/reports/GPUS" 2>/dev/null || echo missing)" = "$(gpu_names)" ] \
     && [ "$(cat "$REPORTS_FROM/reports/PROFILE" 2>/dev/null || echo 'jopts=;ptxjit=')" = "$(run_profile)" ]; then
    mkdir -p "$out/reports"  # this run's record then says what it merged, so a later call can take this one over too
    [ -e "$out/reports/COMMIT" ] || echo "$commit" > "$out/reports/COMMIT"
    [ -e "$out/reports/DIRTY" ] || echo "$dirty" > "$out/reports/DIRTY"
    [ -e "$out/reports/GPUS" ] || gpu_names > "$out/reports/GPUS"
    [ -e "$out/reports/PROFILE" ] || run_profile > "$out/reports/PROFILE"
    # a filtered earlier suite stays named as such in the merged record
    if [ -f "$REPORTS_FROM/reports/FILTER" ] && [ ! -e "$out/reports/FILTER" ]; then cp "$REPORTS_FROM/reports/FILTER" "$out/reports/"; fi
    for d in "$REPORTS_FROM"/reports/*/; do
      m=$(basename "$d"); [ -e "$out/reports/$m" ] || cp -r "$d" "$out/reports/$m"
    done
    for f in "$REPORTS_FROM"/validation-rules-*.json; do [ -e "$f" ] && [ ! -e "$out/$(basename "$f")" ] && cp "$f" "$out/"; done
    # that run's sanitizer results too, for each tool entry this run did not run itself
    if [ -f "$REPORTS_FROM/sanitizer-args.txt" ]; then
      while IFS= read -r a; do
        entry=${a%%=*}; f=$(san_file "$entry"); dup=0
        for b in "${sanitizer_args[@]}"; do [ "${b%%=*}" = "$entry" ] && dup=1; done
        [ $dup = 1 ] && continue
        [ -d "$REPORTS_FROM/reports-sanitizer-$f" ] && [ ! -e "$out/reports-sanitizer-$f" ] && cp -r "$REPORTS_FROM/reports-sanitizer-$f" "$out/"
        sanitizer_args+=(--sanitizer "$(printf '%s' "$a" | sed -E "s#;reports=[^;]*#;reports=$out/reports-sanitizer-$f#")")
        echo "validation record: sanitizer $entry from $REPORTS_FROM"
      done < "$REPORTS_FROM/sanitizer-args.txt"
    fi
    echo "validation record: JUnit reports of $(ls "$REPORTS_FROM/reports" | grep -v -x -e COMMIT -e DIRTY -e GPUS -e FILTER -e PROFILE | tr '\n' ' ')from $REPORTS_FROM (same commit $commit, same GPUs)"
  else
    echo "REPORTS_FROM=$REPORTS_FROM tested commit '$(cat "$REPORTS_FROM/reports/COMMIT" 2>/dev/null)' dirty '$(cat "$REPORTS_FROM/reports/DIRTY" 2>/dev/null)' on GPUs '$(cat "$REPORTS_FROM/reports/GPUS" 2>/dev/null)' ($(cat "$REPORTS_FROM/reports/PROFILE" 2>/dev/null || echo 'jopts=;ptxjit=')), not $commit dirty $dirty on '$(gpu_names)' ($(run_profile)): not merged"
    rc=1  # the call asked for a merge it did not get: its record (if any) lacks what it was meant to hold
  fi
fi
# every sanitizer result of the record, this run's and those taken over, one a line as passed to validation-record: a
# later call's REPORTS_FROM takes them all (so three calls chain)
if [ ${#sanitizer_args[@]} -gt 0 ]; then
  for a in "${sanitizer_args[@]}"; do [ "$a" = --sanitizer ] || printf '%s\n' "$a"; done > "$out/sanitizer-args.txt"
fi
if [ -n "$(find "$out/reports" -name '*.xml' 2>/dev/null | head -1)" ]; then
  vr=(); [ -f "$out/validation-rules-ops.json" ] && vr=(--validation-rules "$out/validation-rules-ops.json")
  cli validation-record --reports "$out/reports" --out "$out/validation" --commit "$commit" --dirty="$dirty" "${sanitizer_args[@]}" "${vr[@]}" || rc=1
elif [ "${CHECKS_TESTS:-1}" = 0 ]; then
  # the tests were left to an earlier call whose reports did not come (another commit, or a cut call): no record
  echo "validation record: none: CHECKS_TESTS=0 and no JUnit reports of this commit from REPORTS_FROM"
  rc=1
fi
exit $rc
