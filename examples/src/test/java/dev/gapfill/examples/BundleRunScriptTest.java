package dev.gapfill.examples;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * scripts/bundle-run.sh's sanitizer step, run for real on a fake bundle whose {@code java} and
 * {@code compute-sanitizer} are stand-ins that record what they were asked: the class shards, the device order per
 * tool process, and the results a later call takes over through REPORTS_FROM.
 */
class BundleRunScriptTest {
    private static final String COMMIT = "0123456789abcdef0123456789abcdef01234567";

    @TempDir Path tmp;
    private Path bundle;
    private Path bin;
    private Path javaLog;

    @BeforeEach
    void fakeBundle() throws IOException {
        Path script = Path.of("..", "scripts", "bundle-run.sh").toAbsolutePath().normalize();
        assumeTrue(Files.isRegularFile(script), "run from the examples module of a checkout");
        assumeTrue(Files.isExecutable(Path.of("/bin/bash")), "needs bash");
        bundle = tmp.resolve("bundle");
        Files.createDirectories(bundle.resolve("lib"));
        Files.createDirectories(bundle.resolve("tests/core"));
        Files.createDirectories(bundle.resolve("jre/bin"));
        Files.copy(script, bundle.resolve("run.sh"));
        Files.writeString(bundle.resolve("BUNDLE_INFO"), "commit=" + COMMIT + "\ndirty=false\n");
        Files.writeString(bundle.resolve("lib/junit-platform-console-standalone-1.11.3.jar"), "");
        Files.writeString(bundle.resolve("lib/gapfill-examples.jar"), "");
        javaLog = tmp.resolve("java.log");
        // java: only `cli validation-record` reaches it here; it records its arguments, one a line
        // with FAKE_HANG=1 it is a tool's JVM that never ends and answers SIGQUIT with a "thread dump" (python, since
        // a shell started in the background cannot trap the SIGQUIT it inherits as ignored, and unblocked, since a
        // process started from this JVM inherits SIGQUIT blocked; a real JVM installs and unblocks its own handler)
        executable(bundle.resolve("jre/bin/java"), "#!/bin/bash\n"
                + "if [ \"${FAKE_HANG:-}\" = 1 ]; then exec python3 -c 'import signal, time\n"
                + "import os, sys\n"
                + "def dump(*a):\n"
                + "    print(\"THREAD-DUMP\", flush=True)\n"
                + "    if os.environ.get(\"FAKE_HANG_EXIT_ON_QUIT\"): sys.exit(0)\n"
                + "signal.signal(signal.SIGQUIT, dump)\n"
                + "signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGQUIT])\n"
                + "while True: time.sleep(0.1)' \"$@\"; fi\n"
                + "[ -n \"${FAKE_TESTS:-}\" ] && echo \"[ $FAKE_TESTS tests successful ]\"\n"
                + "case \" $* \" in *\" bench \"*) printf '%s\\n' \"${GAPFILL_MACHINE_HISTORY-unset}\" >> '" + tmp.resolve("bench-history.log") + "';; esac\n"
                + "case \" $* \" in *\" bench \"*) printf '%s\\n' \"${GAPFILL_COMMIT-unset}\" >> '" + tmp.resolve("bench-commit.log") + "';; esac\n"
                // one write per call: the repeat step runs two fake JVMs at once, whose argument lists must not interleave
                + "args=$(printf '%s\\n' \"$@\"); printf '%s\\n' \"$args\" >> '" + javaLog + "'\n");
        bin = tmp.resolve("bin");
        Files.createDirectories(bin);
        // compute-sanitizer: writes the summary line the script sums, and says what it was given
        executable(bin.resolve("compute-sanitizer"), String.join("\n",
                "#!/bin/bash",
                "if [ \"${FAKE_HANG:-}\" = 1 ]; then while [ \"${1##*/}\" != java ]; do shift; done; exec \"$@\"; fi",
                "all=(\"$@\")",
                "while [ $# -gt 0 ]; do case $1 in",
                "  --tool) tool=$2; shift;; --log-file) log=$2; shift;; --include-classname) cls=$2; shift;;",
                "  --select-method) sel=\"${sel:+$sel|}$2\"; shift;;",
                "  --reports-dir) rep=$2; shift;; --kernel-name) filt=$2; shift;; -Dgapfill.test.*) jvm=\"${jvm:+$jvm }$1\";;",
                "  --config=junit.jupiter.execution.timeout.default=*) limit=${1##*=};; esac; shift; done",
                "mkdir -p \"$rep\"",
                "if [ \"$tool\" = racecheck ]; then echo '========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)' > \"$log\";",
                "else echo '========= ERROR SUMMARY: 0 errors' > \"$log\"; fi",
                "echo \"tool=$tool devices=${CUDA_VISIBLE_DEVICES:-unset} classes=${cls:-methods:$sel} filter=${filt:-none}\"",
                "echo \"jvm=${jvm:-none} limit=$limit\" > \"$rep/../jvm-$(basename \"$rep\")\"",
                // FAKE_ORPHAN=1: the tool ends, reporting 0 errors, while the JVM it started runs on (as racecheck did)
                "if [ \"${FAKE_ORPHAN:-}\" = 1 ]; then set -- \"${all[@]}\"; while [ \"${1##*/}\" != java ]; do shift; done;",
                "  FAKE_HANG=1 \"$@\" > /dev/null 2>&1 & fi",
                "exit 0", ""));
    }

    private static void executable(Path p, String text) throws IOException {
        Files.writeString(p, text, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private String run(Path out, Map<String, String> env) throws Exception {
        return run(out, env, "sanitizer");
    }

    private String run(Path out, Map<String, String> env, String step) throws Exception {
        ProcessBuilder pb = new ProcessBuilder("/bin/bash", bundle.resolve("run.sh").toString(), out.toString(), step)
                .redirectErrorStream(true);
        pb.environment().put("PATH", bin + ":" + System.getenv("PATH"));
        pb.environment().remove("CUDA_VISIBLE_DEVICES");
        pb.environment().put("GAPFILL_MACHINE_HISTORY_FILE", tmp.resolve("machine-history").toString());
        pb.environment().putAll(env);
        // a working directory holding a file that the shard regex of the first test matches as a glob pattern
        Path cwd = tmp.resolve("cwd");
        Files.createDirectories(cwd);
        Files.writeString(cwd.resolve("a=.Xverify.(Bmm|Int8Mm)GpuTest"), "");
        pb.directory(cwd.toFile());
        Process p = pb.start();
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "run.sh finished");
        return text;
    }

    @Test
    void theTestsStepTakesEveryTestClassOrTheClassesNamed() throws Exception {
        run(tmp.resolve("all"), Map.of(), "tests");
        List<String> args = Files.readAllLines(javaLog);
        int i = args.indexOf("--include-classname");
        assertTrue(i >= 0 && i + 1 < args.size(), String.join(" ", args));
        assertEquals(".*(Test|Tests|Properties)$", args.get(i + 1));
        Files.delete(javaLog);
        run(tmp.resolve("one"), Map.of("TESTS_CLASSES", ".*verify\\.BmmGpuTest"), "tests");
        args = Files.readAllLines(javaLog);
        i = args.indexOf("--include-classname");
        assertTrue(i >= 0 && i + 1 < args.size(), String.join(" ", args));
        assertEquals(".*verify\\.BmmGpuTest", args.get(i + 1));
    }

    @Test
    void gapfillJoptsReachEveryJavaProcess() throws Exception {
        run(tmp.resolve("t"), Map.of("GAPFILL_JOPTS", "-Dgapfill.debug.deviceAs=a100 -Dx.y=2"), "tests");
        List<String> args = Files.readAllLines(javaLog);
        assertTrue(args.contains("-Dgapfill.debug.deviceAs=a100") && args.contains("-Dx.y=2"), String.join(" ", args));
        Files.delete(javaLog);
        run(tmp.resolve("b"), Map.of("GAPFILL_JOPTS", "-Dgapfill.debug.deviceAs=l4", "BENCH_OPS", "bmm:30"), "bench");
        assertTrue(Files.readAllLines(javaLog).contains("-Dgapfill.debug.deviceAs=l4"));
    }

    @Test
    void shardsAndDeviceOrdersReachTheirOwnToolProcess() throws Exception {
        Path out = tmp.resolve("out1");
        String log = run(out, Map.of(
                "SANITIZER_TOOLS", "memcheck racecheck/a racecheck/b",
                "SANITIZER_SHARDS", "a=.*verify\\.(Bmm|Int8Mm)GpuTest b=^(?!.*verify\\.(Bmm|Int8Mm)GpuTest$).*(Test|Tests|Properties)$",
                "SANITIZER_GPUS", "racecheck/b=1,0 memcheck=1,0"));
        assertEquals("tool=memcheck devices=1,0 classes=.*(Test|Tests|Properties)$ filter=none",
                Files.readString(out.resolve("sanitizer-memcheck.out")).trim(), log);
        assertEquals("tool=racecheck devices=unset classes=.*verify\\.(Bmm|Int8Mm)GpuTest filter=none",
                Files.readString(out.resolve("sanitizer-racecheck-a.out")).trim());
        // the regex keeps its * and ? (no pathname expansion) and its $
        assertEquals("tool=racecheck devices=1,0 classes=^(?!.*verify\\.(Bmm|Int8Mm)GpuTest$).*(Test|Tests|Properties)$ filter=none",
                Files.readString(out.resolve("sanitizer-racecheck-b.out")).trim());
        List<String> results = Files.readAllLines(out.resolve("sanitizer-args.txt"));
        assertEquals(3, results.size(), String.join("\n", results));
        assertTrue(results.get(1).startsWith("racecheck/a=errors=0;status=ok;exit=0;"), results.get(1));
        assertTrue(results.get(1).contains("classes .*verify\\.(Bmm|Int8Mm)GpuTest"), results.get(1));
        assertTrue(results.get(2).contains("CUDA_VISIBLE_DEVICES=1,0;reports=" + out.resolve("reports-sanitizer-racecheck-b")), results.get(2));
        assertTrue(log.contains("compute-sanitizer racecheck/b: 0 errors, ok"), log);
    }

    @Test
    void aMethodsShardSelectsThoseMethodsInsteadOfScanningClasses() throws Exception {
        Path out = tmp.resolve("out");
        String methods = "a.B#grid(int,int,int)|a.B#property(a.B$Problem,long)";
        String log = run(out, Map.of("SANITIZER_TOOLS", "racecheck/p", "SANITIZER_SHARDS", "p=methods:" + methods));
        assertEquals("tool=racecheck devices=unset classes=methods:" + methods + " filter=none",
                Files.readString(out.resolve("sanitizer-racecheck-p.out")).trim(), log);
        assertTrue(log.contains("compute-sanitizer racecheck/p: 0 errors, ok"), log);
    }

    @Test
    void gapfillOnlyEntriesInstrumentOurKernelsAlone() throws Exception {
        Path out = tmp.resolve("out");
        String log = run(out, Map.of("SANITIZER_TOOLS", "initcheck memcheck", "SANITIZER_GAPFILL_ONLY", "initcheck"));
        String regex = kernelRegex();
        assertEquals("tool=initcheck devices=unset classes=.*(Test|Tests|Properties)$ filter=regex=" + regex,
                Files.readString(out.resolve("sanitizer-initcheck.out")).trim(), log);
        assertEquals("tool=memcheck devices=unset classes=.*(Test|Tests|Properties)$ filter=none",
                Files.readString(out.resolve("sanitizer-memcheck.out")).trim());
        assertTrue(Files.readAllLines(out.resolve("sanitizer-args.txt")).get(0).contains("Gapfill kernels only (" + regex + ")"));
    }

    @Test
    void jvmOptionsAndTheTestTimeLimitReachTheirOwnToolProcess() throws Exception {
        Path out = tmp.resolve("out");
        String log = run(out, Map.of(
                "SANITIZER_TOOLS", "racecheck/i0 racecheck/i1 memcheck",
                "SANITIZER_SHARDS", "i0=.*Int8MmGpuTest i1=.*Int8MmGpuTest",
                "SANITIZER_JOPTS", "racecheck/i0=-Dgapfill.test.slice=0/2 racecheck/i1=-Dgapfill.test.slice=1/2,-Dgapfill.test.x=y",
                "SANITIZER_TEST_TIMEOUT", "540s"));
        assertEquals("jvm=-Dgapfill.test.slice=0/2 limit=540s", Files.readString(out.resolve("jvm-reports-sanitizer-racecheck-i0")).trim(), log);
        assertEquals("jvm=-Dgapfill.test.slice=1/2 -Dgapfill.test.x=y limit=540s",
                Files.readString(out.resolve("jvm-reports-sanitizer-racecheck-i1")).trim());
        assertEquals("jvm=none limit=540s", Files.readString(out.resolve("jvm-reports-sanitizer-memcheck")).trim());
        List<String> results = Files.readAllLines(out.resolve("sanitizer-args.txt"));
        assertTrue(results.get(1).contains("JVM -Dgapfill.test.slice=1/2 -Dgapfill.test.x=y"), results.get(1));
        assertFalse(results.get(2).contains("JVM"), results.get(2));
        String defaults = run(tmp.resolve("out2"), Map.of("SANITIZER_TOOLS", "synccheck"));
        assertEquals("jvm=none limit=180s", Files.readString(tmp.resolve("out2/jvm-reports-sanitizer-synccheck")).trim(), defaults);
    }

    @Test
    void aToolProcessStillRunningNearItsLimitLeavesAThreadDump() throws Exception {
        assumeTrue(new ProcessBuilder("python3", "-c", "pass").start().waitFor() == 0, "needs python3 for the fake JVM");
        Path out = tmp.resolve("out");
        String log = run(out, Map.of("SANITIZER_TOOLS", "memcheck racecheck/a", "SANITIZER_SHARDS", "a=.*",
                "SANITIZER_TIMEOUT", "4", "FAKE_HANG", "1"));
        for (String f : new String[] {"memcheck", "racecheck-a"}) {
            String text = Files.readString(out.resolve("sanitizer-" + f + ".out"));
            assertEquals(1, text.split("THREAD-DUMP", -1).length - 1, f + ": one dump, from its own watchdog: " + text);
            assertTrue(Files.readString(out.resolve("sanitizer-" + f + ".status")).startsWith("124 "), f);
        }
        assertTrue(log.contains("compute-sanitizer memcheck: ? errors, timeout-4s"), log);
    }

    @Test
    void aJvmThatOutlivesItsToolIsEndedAndItsEntryIsNotClean() throws Exception {
        assumeTrue(new ProcessBuilder("python3", "-c", "pass").start().waitFor() == 0, "needs python3 for the fake JVM");
        assumeTrue(new ProcessBuilder("pgrep", "-V").start().waitFor() == 0, "needs pgrep");
        Path out = tmp.resolve("out");
        String log = run(out, Map.of("SANITIZER_TOOLS", "memcheck/zq7", "SANITIZER_SHARDS", "zq7=.*", "FAKE_ORPHAN", "1"));
        assertTrue(Files.readString(out.resolve("sanitizer-memcheck-zq7.status")).trim().matches("0 \\d+ leftover"),
                Files.readString(out.resolve("sanitizer-memcheck-zq7.status")));
        assertTrue(log.contains("compute-sanitizer memcheck/zq7: 0 errors, ok-jvm-outlived-tool (exit 0"), log);
        assertTrue(Files.readString(out.resolve("sanitizer-memcheck-zq7.out")).contains("outlived compute-sanitizer and was ended"));
        Process left = new ProcessBuilder("pgrep", "-f", "--", "-Dgapfill.sanitizer.entry=memcheck-zq7( |$)").start();
        String pids = new String(left.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertTrue(left.waitFor(10, TimeUnit.SECONDS));
        assertEquals("", pids, "the fake JVM was ended before the step returned");
        assertFalse(Files.readString(out.resolve("sanitizer-args.txt")).contains("status=ok;"), "not recorded as clean");
    }

    @Test
    void aTimedStepWaitsForOtherGpuProcessesAndSaysWhatItWaitedFor() throws Exception {
        Path busy = tmp.resolve("busy");
        // nvidia-smi: lists one other compute process while the file exists (and a complaint line, which is not one)
        executable(bin.resolve("nvidia-smi"), "#!/bin/bash\ncase \"$*\" in *query-compute-apps*) echo 'Failed to x';"
                + " [ -e '" + busy + "' ] && echo '4242, /usr/bin/java';; esac\nexit 0\n");
        Files.writeString(busy, "");
        Thread ender = new Thread(() -> {
            try {
                Thread.sleep(2500);
                Files.deleteIfExists(busy);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        ender.start();
        String log = run(tmp.resolve("o1"), Map.of("BENCH_OPS", "bmm:30"), "bench");
        ender.join();
        List<String> seen = Files.readAllLines(tmp.resolve("bench-history.log"));
        assertTrue(seen.get(0).matches("\\S+Z 0123456789ab bench, at its start: waited [1-9]\\d* s for other GPU processes to end \\(4242, /usr/bin/java\\)"),
                seen.toString());
        assertTrue(log.contains("bench: waited "), log);
        // still busy after GPU_QUIET_WAIT: the sweep runs and its history says so; a free GPU adds nothing
        Files.writeString(busy, "");
        run(tmp.resolve("o2"), Map.of("BENCH_OPS", "bmm:30", "GPU_QUIET_WAIT", "1"), "bench");
        Files.delete(busy);
        run(tmp.resolve("o3"), Map.of("BENCH_OPS", "bmm:30"), "bench");
        seen = Files.readAllLines(tmp.resolve("bench-history.log"));
        assertEquals(3, seen.size(), seen.toString());
        assertTrue(seen.get(1).contains("bench, at its start: other GPU processes still running after 1 s, timings may be disturbed (4242, /usr/bin/java)"),
                seen.get(1));
        // the third sees the earlier steps' lines (their notes in parentheses), and no note of its own
        assertFalse(seen.get(2).contains("at its start"), seen.get(2));
        assertTrue(seen.get(2).contains("bench bmm:30 (other GPU processes still running after 1 s"), seen.get(2));
    }

    @Test
    void theRepeatStepRunsTheClassesUntilItsTimeIsUpAndKeepsTheLogsOfHungRuns() throws Exception {
        Path out = tmp.resolve("out");
        String log = run(out, Map.of("REPEAT_CLASSES", "a.B c.D", "REPEAT_JVMS", "2", "REPEAT_SECONDS", "1",
                "REPEAT_JOPTS", "-Dx=1", "FAKE_TESTS", "2"), "repeat");
        List<String> runs = Files.readAllLines(out.resolve("repeat/summary.txt"));
        assertTrue(runs.size() >= 2 && runs.stream().allMatch(l -> l.matches("jvm[12] run\\d+ exit 0 \\d+s tests 2")), runs.toString());
        assertTrue(log.contains("repeat: " + runs.size() + " runs of [a.B c.D] in 2 JVMs (-Dx=1), 0 not passing"), log);
        String args = Files.readString(javaLog);
        assertTrue(args.contains("--select-class\na.B\n--select-class\nc.D\n") && args.contains("-Dx=1\n"), args);
        try (var logs = Files.list(out.resolve("repeat"))) {
            assertEquals(1, logs.count(), "a passing run's log is removed");
        }

        // a run past its limit gets SIGQUIT (the fake JVM dumps, then ends; a real one runs on until SIGKILL, 137): the
        // run counts as timed out, whatever the JVM returned, and its log stays
        Path hung = tmp.resolve("hung");
        String hungLog = run(hung, Map.of("REPEAT_CLASSES", "a.B", "REPEAT_JVMS", "1", "REPEAT_SECONDS", "1",
                "REPEAT_LIMIT", "2", "FAKE_HANG", "1", "FAKE_HANG_EXIT_ON_QUIT", "1"), "repeat");
        assertEquals(List.of("jvm1 run1 exit 124"), Files.readAllLines(hung.resolve("repeat/summary.txt")).stream()
                .map(l -> l.replaceAll(" \\d+s tests 0$", "")).toList());
        assertTrue(Files.readString(hung.resolve("repeat/jvm1-run1.log")).contains("THREAD-DUMP"));
        assertTrue(hungLog.contains("repeat: 1 runs of [a.B] in 1 JVMs, 1 not passing"), hungLog);

        // a JVM that exits 0 having run no test (a class name that matches nothing, say) did not pass
        Path none = tmp.resolve("none");
        String noneLog = run(none, Map.of("REPEAT_CLASSES", "a.B", "REPEAT_JVMS", "1", "REPEAT_SECONDS", "1"), "repeat");
        List<String> noneRuns = Files.readAllLines(none.resolve("repeat/summary.txt"));
        assertTrue(!noneRuns.isEmpty() && noneRuns.stream().allMatch(l -> l.matches("jvm1 run\\d+ exit 3 \\d+s tests 0")), noneRuns.toString());
        assertTrue(noneLog.contains("in 1 JVMs, " + noneRuns.size() + " not passing"), noneLog);
    }

    /** The regex bundle-run.sh gives --kernel-name for Gapfill's kernels. */
    private static String kernelRegex() throws IOException {
        String line = Files.readAllLines(Path.of("..", "scripts", "bundle-run.sh")).stream()
                .filter(l -> l.startsWith("gapfill_kernels='")).findFirst().orElseThrow();
        return line.substring(line.indexOf('\'') + 1, line.lastIndexOf('\''));
    }

    @Test
    void everyKernelOfCudaNativeMatchesTheGapfillKernelRegex() throws Exception {
        // the kernels as built: build-fatbins.sh keeps one ptxas log per fatbin (the fatbins themselves are compressed,
        // so their ELF section names are not readable bytes), each naming every entry it compiled
        Path built = Path.of("..", "cuda-native", "target", "classes");
        Path logs = Path.of("..", "cuda-native", "target", "ptxas");
        List<Path> fatbins;
        try (var files = Files.walk(built)) {
            fatbins = files.filter(p -> p.toString().endsWith(".fatbin")).toList();
        } catch (java.nio.file.NoSuchFileException e) {
            fatbins = List.of();
        }
        assumeTrue(!fatbins.isEmpty(), "cuda-native's fatbins are built first in the reactor (nvcc)");
        java.util.regex.Pattern ours = java.util.regex.Pattern.compile(kernelRegex());
        java.util.regex.Pattern entry = java.util.regex.Pattern.compile("Compiling entry function '([A-Za-z_][A-Za-z_0-9]*)'");
        java.util.Set<String> names = new java.util.TreeSet<>();
        for (Path fatbin : fatbins) {
            String module = fatbin.getParent().getFileName() + "." + fatbin.getFileName().toString().replace(".fatbin", "");
            Path log = logs.resolve(module + ".log");
            assertTrue(Files.isRegularFile(log), "no ptxas log for " + fatbin + " (" + log + ")");
            int entries = 0;
            for (java.util.regex.Matcher m = entry.matcher(Files.readString(log)); m.find(); entries++) {
                names.add(m.group(1));
            }
            assertTrue(entries > 0, "ptxas log " + log + " names no entry function");
        }
        assertTrue(names.size() > 100, "kernels found: " + names);
        assertTrue(names.contains("fault_for_tests") && names.contains("l2_flush_read"), "kernels found: " + names);
        for (String name : names) {
            assertTrue(ours.matcher(name).find(), "kernel " + name + " is not matched by " + ours);
        }
    }

    @Test
    void aShardWithoutClassesFailsInsteadOfCheckingNothing() throws Exception {
        Path out = tmp.resolve("out");
        String log = run(out, Map.of("SANITIZER_TOOLS", "racecheck/missing", "SANITIZER_SHARDS", "a=.*"));
        assertTrue(log.contains("compute-sanitizer racecheck/missing: ? errors"), log);
        assertFalse(Files.readString(out.resolve("sanitizer-args.txt")).contains("status=ok"));
    }

    /** An earlier call that ran these tools and also tested (a JUnit report and the commit it tested). */
    private Path earlierCall(String tools, String testedCommit) throws Exception {
        return earlierCall(tools, testedCommit, "false");
    }

    /** As above, from a bundle whose tree was dirty or not ({@code dirty}: "true" or "false"). */
    private Path earlierCall(String tools, String testedCommit, String dirty) throws Exception {
        Path first = tmp.resolve("first");
        run(first, Map.of("SANITIZER_TOOLS", tools));
        Files.createDirectories(first.resolve("reports/core"));
        Files.writeString(first.resolve("reports/core/TEST-x.xml"), "<testsuite/>");
        Files.writeString(first.resolve("reports/COMMIT"), testedCommit + "\n");
        Files.writeString(first.resolve("reports/DIRTY"), dirty + "\n");
        Files.writeString(first.resolve("reports/GPUS"), thisMachinesGpus());
        return first;
    }

    /** What run.sh's gpu_names writes on this machine ("unknown" without nvidia-smi), for an earlier call of the same machine. */
    private static String thisMachinesGpus() throws Exception {
        Process p = new ProcessBuilder("bash", "-c",
                "{ command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | tr '\\n' ';'; } || echo unknown")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        p.waitFor();
        return out;
    }

    @Test
    void anEarlierCallOnOtherGpusIsNotMerged() throws Exception {
        Path other = earlierCall("memcheck", COMMIT);
        Files.writeString(other.resolve("reports/GPUS"), "NVIDIA H100 80GB HBM3;NVIDIA H100 80GB HBM3;GPU of another machine;");
        Path second = tmp.resolve("second");
        String log = run(second, Map.of("SANITIZER_TOOLS", "racecheck/a", "SANITIZER_SHARDS", "a=.*", "REPORTS_FROM", other.toString()));
        assertTrue(log.contains("not merged"), log);
        assertFalse(log.contains("sanitizer memcheck from"), log);
    }

    @Test
    void aDeviceProfileCallAndAPlainOneAreNotMergedIntoEachOther() throws Exception {
        // an earlier call under gapfill.debug.deviceAs (its reports describe another part) is not taken into a plain record
        Path profiled = earlierCall("memcheck", COMMIT);
        Files.writeString(profiled.resolve("reports/PROFILE"), "jopts=-Dgapfill.debug.deviceAs=a100;ptxjit=1\n");
        String log = run(tmp.resolve("plain"), Map.of("SANITIZER_TOOLS", "racecheck/a", "SANITIZER_SHARDS", "a=.*",
                "REPORTS_FROM", profiled.toString()));
        assertTrue(log.contains("not merged") && log.contains("deviceAs=a100"), log);
        assertFalse(log.contains("sanitizer memcheck from"), log);
        // nor a plain earlier call (no PROFILE file: an older bundle's) into a profiled one; the same profile merges
        Files.delete(profiled.resolve("reports/PROFILE"));
        log = run(tmp.resolve("prof"), Map.of("SANITIZER_TOOLS", "racecheck/a", "SANITIZER_SHARDS", "a=.*",
                "REPORTS_FROM", profiled.toString(), "GAPFILL_JOPTS", "-Dgapfill.debug.deviceAs=a100", "CUDA_FORCE_PTX_JIT", "1"));
        assertTrue(log.contains("not merged"), log);
        Files.writeString(profiled.resolve("reports/PROFILE"), "jopts=-Dgapfill.debug.deviceAs=a100;ptxjit=1\n");
        log = run(tmp.resolve("same"), Map.of("SANITIZER_TOOLS", "racecheck/a", "SANITIZER_SHARDS", "a=.*",
                "REPORTS_FROM", profiled.toString(), "GAPFILL_JOPTS", "-Dgapfill.debug.deviceAs=a100", "CUDA_FORCE_PTX_JIT", "1"));
        assertTrue(log.contains("validation record: sanitizer memcheck from " + profiled), log);
        assertEquals("jopts=-Dgapfill.debug.deviceAs=a100;ptxjit=1", Files.readString(tmp.resolve("same/reports/PROFILE")).trim());
    }

    @Test
    void aDirtyTreesCallIsNotMergedIntoACleanOnesRecordAndAMergedCallCanBeTakenOverAgain() throws Exception {
        Path dirty = earlierCall("memcheck", COMMIT, "true");
        Path second = tmp.resolve("second");
        String log = run(second, Map.of("SANITIZER_TOOLS", "racecheck/a", "SANITIZER_SHARDS", "a=.*", "REPORTS_FROM", dirty.toString()));
        assertTrue(log.contains("not merged"), log);
        assertFalse(log.contains("sanitizer memcheck from"), log);
        // a clean earlier call is merged, and the merged folder names its commit and flag for a third call
        Files.writeString(dirty.resolve("reports/DIRTY"), "false\n");
        Path third = tmp.resolve("third");
        log = run(third, Map.of("SANITIZER_TOOLS", "racecheck/a", "SANITIZER_SHARDS", "a=.*", "REPORTS_FROM", dirty.toString()));
        assertTrue(log.contains("validation record: sanitizer memcheck from " + dirty), log);
        assertEquals(COMMIT, Files.readString(third.resolve("reports/COMMIT")).trim());
        assertEquals("false", Files.readString(third.resolve("reports/DIRTY")).trim());
    }

    @Test
    void aLaterCallOfTheSameCommitTakesOverTheEarlierToolsAndReports() throws Exception {
        Path first = earlierCall("memcheck initcheck", COMMIT);
        Path second = tmp.resolve("second");
        String log = run(second, Map.of("SANITIZER_TOOLS", "racecheck/a initcheck", "SANITIZER_SHARDS", "a=.*",
                "REPORTS_FROM", first.toString()));
        assertTrue(log.contains("validation record: sanitizer memcheck from " + first), log);
        assertFalse(log.contains("sanitizer initcheck from"), "this call ran initcheck itself: " + log);
        List<String> args = Files.readAllLines(javaLog);
        List<String> san = args.stream().filter(a -> a.contains("=errors=")).toList();
        assertEquals(3, san.size(), String.join("\n", args));
        assertTrue(san.stream().anyMatch(a -> a.startsWith("racecheck/a=")));
        String memcheck = san.stream().filter(a -> a.startsWith("memcheck=")).findFirst().orElseThrow();
        // the earlier call's reports travel into this call's folder, and the entry points at them there
        assertTrue(memcheck.endsWith(";reports=" + second.resolve("reports-sanitizer-memcheck")), memcheck);
        assertTrue(Files.isDirectory(second.resolve("reports-sanitizer-memcheck")));
        assertTrue(args.contains("validation-record"), String.join("\n", args));
        // and this call's results list them all, so a third call can take over both
        assertEquals(san, Files.readAllLines(second.resolve("sanitizer-args.txt")));
    }

    /** The checks step without its tests (CHECKS_TESTS=0) runs the tools, and the record takes the suite of an earlier call. */
    @Test
    void checksWithoutTestsTakeTheSuiteOfAnEarlierCall() throws Exception {
        Path first = earlierCall("memcheck", COMMIT);
        Path second = tmp.resolve("second");
        String log = run(second, Map.of("SANITIZER_TOOLS", "racecheck/a", "SANITIZER_SHARDS", "a=.*", "STRESS_SECONDS", "0",
                "CHECKS_TESTS", "0", "REPORTS_FROM", first.toString()), "checks");
        assertFalse(log.contains("tests["), "no module's tests ran: " + log);
        assertTrue(log.contains("compute-sanitizer racecheck/a"), log);
        assertTrue(log.contains("validation record: JUnit reports of core"), log);
        assertTrue(Files.exists(second.resolve("reports/core/TEST-x.xml")), "the earlier call's reports are in this record");
        assertTrue(Files.readAllLines(javaLog).contains("validation-record"));
        // an earlier call of another commit brings no reports: no record, and the call says so (and fails)
        Path other = tmp.resolve("other");
        Files.createDirectories(other.resolve("reports/core"));
        Files.writeString(other.resolve("reports/core/TEST-x.xml"), "<testsuite/>");
        Files.writeString(other.resolve("reports/COMMIT"), "ffffffffffffffffffffffffffffffffffffffff\n");
        String none = run(tmp.resolve("fourth"), Map.of("SANITIZER_TOOLS", "racecheck/a", "SANITIZER_SHARDS", "a=.*",
                "STRESS_SECONDS", "0", "CHECKS_TESTS", "0", "REPORTS_FROM", other.toString()), "checks");
        assertTrue(none.contains("validation record: none: CHECKS_TESTS=0"), none);
        // without the flag the checks step runs the suite as before
        String withTests = run(tmp.resolve("third"), Map.of("SANITIZER_TOOLS", "racecheck/a", "SANITIZER_SHARDS", "a=.*",
                "STRESS_SECONDS", "0"), "checks");
        assertTrue(withTests.contains("tests["), withTests);
    }

    @Test
    void aSweepIsToldWhatRanOnTheMachineBeforeIt() throws Exception {
        // a fresh machine: nothing before the first sweep; then the info step and the second sweep see it, in order
        run(tmp.resolve("o1"), Map.of("BENCH_OPS", "bmm:30"), "bench");
        run(tmp.resolve("o2"), Map.of("STRESS_SECONDS", "7"), "stress");
        run(tmp.resolve("o3"), Map.of("BENCH_ARGS", "--op gqa_decode"), "bench");
        List<String> seen = Files.readAllLines(tmp.resolve("bench-history.log"));
        assertEquals(2, seen.size(), seen.toString());
        assertEquals("", seen.get(0), "a freshly started machine has no history");
        String[] before = seen.get(1).split(";");
        assertEquals(2, before.length, seen.get(1));
        assertTrue(before[0].matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ 0123456789ab bench bmm:30"), before[0]);
        assertTrue(before[1].endsWith(" 0123456789ab stress 7s"), before[1]);
        List<String> all = Files.readAllLines(tmp.resolve("machine-history"));
        assertEquals(3, all.size(), all.toString());
        assertTrue(all.get(2).endsWith(" bench --op gqa_decode"), all.get(2));
    }

    @Test
    void eachOpOfABenchOpsStepIsToldTheOpsBeforeItAndADirtyTreesSweepsSaySo() throws Exception {
        run(tmp.resolve("o1"), Map.of("BENCH_OPS", "bmm:30 int8_mm:20 moe_route:10"), "bench");
        List<String> seen = Files.readAllLines(tmp.resolve("bench-history.log"));
        assertEquals(3, seen.size(), seen.toString());
        assertEquals("", seen.get(0), "a freshly started machine has no history");
        assertTrue(seen.get(1).matches("\\S+Z 0123456789ab bench bmm:30 \\(this step\\)"), seen.get(1));
        String[] third = seen.get(2).split(";");
        assertEquals(2, third.length, seen.get(2));
        assertTrue(third[1].endsWith(" bench int8_mm:20 (this step)"), seen.get(2));
        assertEquals(List.of(COMMIT, COMMIT, COMMIT), Files.readAllLines(tmp.resolve("bench-commit.log")));
        // a bundle of a modified tree: its sweeps' commit is marked, so --resume never mixes them with a clean build's
        Files.writeString(bundle.resolve("BUNDLE_INFO"), "commit=" + COMMIT + "\ndirty=true\n");
        run(tmp.resolve("o2"), Map.of("BENCH_OPS", "bmm:30"), "bench");
        List<String> commits = Files.readAllLines(tmp.resolve("bench-commit.log"));
        assertEquals(COMMIT + "-dirty", commits.get(commits.size() - 1));
    }

    @Test
    void anEarlierCallOfAnotherCommitIsNotMerged() throws Exception {
        Path first = earlierCall("memcheck", "ffffffffffffffffffffffffffffffffffffffff");
        String log = run(tmp.resolve("second"), Map.of("SANITIZER_TOOLS", "synccheck", "REPORTS_FROM", first.toString()));
        assertTrue(log.contains("not merged"), log);
        assertFalse(Files.exists(javaLog), "no record without reports of this commit");
    }
}
