package dev.gapfill.examples;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.KernelModule;
import dev.gapfill.examples.bench.BenchContext;
import dev.gapfill.examples.bench.BenchRow;
import dev.gapfill.examples.bench.BenchSuite;
import dev.gapfill.examples.bench.BenchSuites;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** The {@code gapfill} command line: environment, benchmarks, verification, charts, the end-to-end demo. */
@Command(name = "gapfill", mixinStandardHelpOptions = true, version = "gapfill 0.1.0",
        description = "GPU inference kernels for the JVM: environment, benchmarks and verification.",
        subcommands = {GapfillCli.Info.class, GapfillCli.Bench.class, GapfillCli.VerifyCmd.class, ValidationRecordCmd.class,
                ChartCmd.class, StressCmd.class, ReportCmd.class, dev.gapfill.examples.demo.DemoCmd.class})
public final class GapfillCli implements Runnable {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs the CLI and returns its exit code (the library itself never exits). */
    public static int run(String... args) {
        return new CommandLine(new GapfillCli()).execute(args);
    }

    @Override public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** Prints devices, versions and which kernels are available for the device's architecture. */
    @Command(name = "info", description = "Print the GPU environment, library versions and bundled kernels.")
    static final class Info implements Callable<Integer> {
        @CommandLine.Spec CommandLine.Model.CommandSpec spec;

        @Override public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            out.println(EnvironmentReport.text());
            out.flush();
            return 0;
        }
    }

    /** The sweeps' op names, which {@code bench --op}'s help lists (a plain list of strings has no candidates of its own). */
    static final class BenchOps implements Iterable<String> {
        @Override public java.util.Iterator<String> iterator() {
            return BenchSuites.all().stream().map(BenchSuite::op).iterator();
        }
    }

    /** Runs benchmark sweeps. */
    @Command(name = "bench", description = "Run benchmark sweeps and write docs/benchmarks/<gpu>/<op>.json and .md.",
            exitCodeListHeading = "Exit codes:%n",
            exitCodeList = {"0:every case measured and checked", "1:an error stopped a sweep", "2:bad arguments (an unknown --op included)",
                    "3:no usable GPU (the CPU reference check ran instead; nothing was benchmarked)",
                    "4:a case failed its correctness check (its row is written, marked failed)"})
    static final class Bench implements Callable<Integer> {
        @CommandLine.Spec CommandLine.Model.CommandSpec spec;
        @Option(names = "--op", split = ",", completionCandidates = BenchOps.class, description = "ops to run (default: all): ${COMPLETION-CANDIDATES}")
        List<String> ops = new ArrayList<>();
        @Option(names = "--out", description = "output root (default: docs/benchmarks)") Path out = Path.of("docs", "benchmarks");
        @Option(names = "--quick", description = "a short subset of each sweep") boolean quick;
        @Option(names = "--dtype", split = ",", description = "only the cases of these dtypes (int8_mm: output dtype), e.g. F32 for an A/B of"
                + " F32 kernels; ops without a dtype axis run whole; the files record it and the report judges them like quick ones")
        List<DType> dtypes = new ArrayList<>();
        @Option(names = "--reps", description = "timed repetitions per path (default 30)") int reps = 30;
        @Option(names = "--warmup", description = "untimed rounds (default 5)") int warmup = 5;
        @Option(names = "--resume", description = "continue an incomplete sweep measured at the same commit on this GPU (its file under --out)"
                + " instead of starting over (with the same --quick, --reps and --warmup); a complete one at the same commit, GPU and dtypes is kept and not run again") boolean resume;
        @Option(names = "--commit", description = "git commit the code was built from (default: $GAPFILL_COMMIT)")
        String commit = System.getenv().getOrDefault("GAPFILL_COMMIT", "unknown");

        /** Exit code of a run without a usable GPU (nothing benchmarked), and of one whose cases failed their check. */
        static final int NO_GPU = 3, CHECK_FAILED = 4;

        @Override public Integer call() throws Exception {
            PrintWriter o = spec.commandLine().getOut();
            List<String> known = BenchSuites.all().stream().map(BenchSuite::op).toList();
            for (String op : ops) {
                if (!known.contains(op)) {  // a misspelt op ran nothing and exited 0
                    throw new CommandLine.ParameterException(spec.commandLine(), "--op: no sweep named '" + op + "'; the sweeps: " + known);
                }
            }
            if (!Gpu.available()) {
                o.println("No usable GPU: " + Gpu.status().reason());
                o.println("Benchmarks need a GPU; running the CPU reference check instead (gapfill verify). Nothing was benchmarked.");
                o.flush();
                int verify = new VerifyCmd().callWith(o, 1);
                return verify != 0 ? verify : NO_GPU;  // a bench step on a host whose GPU did not come up must not pass
            }
            int failed = 0;
            long t0 = System.nanoTime();
            try (BenchContext ctx = new BenchContext(Device.cuda(0), warmup, reps, quick, m -> {
                o.printf(java.util.Locale.ROOT, "  [%6.1f s] %s%n", (System.nanoTime() - t0) / 1e9, m);  // where a sweep's time goes
                o.flush();
            })) {
                ctx.onlyDtypes(java.util.Set.copyOf(dtypes));
                o.println("Benchmarking on " + ctx.info() + (dtypes.isEmpty() ? "" : ", only " + ctx.dtypeFilter()));
                ctx.ceilings();
                ctx.onCheckpoint((op, rows) -> {
                    try {
                        BenchRunner.writeResultsTo(out.resolve(ctx.info().slug()), ctx, op, rows, commit, false);
                    } catch (java.io.IOException e) {
                        o.println("  checkpoint of " + op + " not written: " + e.getMessage());
                    }
                }, java.time.Duration.ofSeconds(10));
                for (BenchSuite s : BenchSuites.all()) {
                    if (!ops.isEmpty() && !ops.contains(s.op())) {
                        continue;
                    }
                    o.println("== " + s.op());
                    o.flush();
                    if (resume && !resumeFrom(ctx, s, o, out, commit)) {
                        continue;
                    }
                    List<BenchRow> rows = s.run(ctx);
                    if (rows.isEmpty() && !dtypes.isEmpty()) {
                        // --dtype F32 over every op: gqa_decode and grouped_gemm have no F32 case; an empty file marked
                        // complete would replace a published one when copied back
                        o.println("no " + s.op() + " case of " + ctx.dtypeFilter() + ": no file written");
                        continue;
                    }
                    BenchRunner.writeResults(out, ctx, s, rows, commit);
                    for (BenchRow r : rows) {
                        if (r.check() != null && !r.check().pass()) {
                            failed++;
                        }
                    }
                    o.println(BenchRunner.markdown(s.op(), ctx.info(), commit, rows));
                    o.flush();
                }
            }
            if (failed > 0) {
                o.println(failed + " benchmark cases FAILED their correctness check");
            }
            o.flush();
            return failed == 0 ? 0 : CHECK_FAILED;
        }
    }

    /**
     * Why an earlier sweep's rows cannot be merged into this run's, or null where they can: another commit or GPU, other
     * dtypes, or other settings (the quick flag, repetitions or warm-up rounds: merged rows would be judged, and labelled,
     * as measured by this run's method; a file written before these were recorded counts as other settings).
     */
    static String resumeRefusal(Map<String, Object> doc, String commit, String gpu, Object dtypes, boolean quick, int reps, int warmup) {
        return resumeRefusal(doc, commit, gpu, null, dtypes, quick, reps, warmup);
    }

    /**
     * As above; {@code libraries} (if not null): the driver, cuBLAS and cuDNN versions of this run, which the earlier file's
     * must match (rows timed under another driver or library are another machine's: the file's header names one set).
     */
    static String resumeRefusal(Map<String, Object> doc, String commit, String gpu, List<String> libraries, Object dtypes, boolean quick,
                                int reps, int warmup) {
        if (!commit.equals(doc.get("commit")) || !gpu.equals(doc.get("gpu"))) {
            return "is from another commit or GPU";
        }
        if (libraries != null) {
            List<Object> earlier = java.util.Arrays.asList(doc.get("driver"), doc.get("cublas"), doc.get("cudnn"));
            if (!earlier.equals(new ArrayList<Object>(libraries))) {
                return "was measured under another driver or library (driver, cuBLAS, cuDNN " + earlier + "; now " + libraries + ")";
            }
        }
        Object earlierDtypes = doc.getOrDefault("dtypes", List.of());
        if (!dtypes.equals(earlierDtypes)) {
            return "has other dtypes (" + earlierDtypes + ")";
        }
        Object q = doc.get("quick");
        Object r = doc.get("reps");
        Object w = doc.get("warmup");
        if (!(q instanceof Boolean) || (Boolean) q != quick || !(r instanceof Number) || ((Number) r).intValue() != reps
                || !(w instanceof Number) || ((Number) w).intValue() != warmup) {
            return "was measured with other settings (quick " + q + ", reps " + r + ", warmup " + w + "; now quick " + quick
                    + ", reps " + reps + ", warmup " + warmup + ")";
        }
        return null;
    }

    /**
     * For {@code bench --resume}: loads the rows of an earlier incomplete sweep of this commit into {@code ctx}. Returns false
     * when the suite need not run (its sweep at this commit is complete).
     */
    @SuppressWarnings("unchecked")
    static boolean resumeFrom(BenchContext ctx, BenchSuite s, PrintWriter o, Path out, String commit) throws java.io.IOException {
        if ("unknown".equals(commit)) {
            // without a commit id two different builds look alike: their rows must not be merged into one file
            o.println("  the build's commit is unknown: " + s.op() + " cannot resume, the sweep starts over");
            return true;
        }
        Path f = out.resolve(ctx.info().slug()).resolve(s.op() + ".json");
        if (!java.nio.file.Files.exists(f)) {
            return true;
        }
        Map<String, Object> doc = (Map<String, Object>) dev.gapfill.examples.bench.JsonReader.parse(
                java.nio.file.Files.readString(f, java.nio.charset.StandardCharsets.UTF_8));
        // a complete sweep of this commit, GPU and dtypes is kept whatever its settings (a --quick resume must not overwrite
        // a full one); an incomplete one is continued only with the settings it was measured with
        String refusal = resumeRefusal(doc, commit, ctx.info().name(), List.of(ctx.info().driverString(), ctx.info().cublasString(),
                ctx.info().cudnnString()), ctx.dtypeFilter(), ctx.quick(), ctx.reps(), ctx.warmup());
        boolean sameSweep = refusal == null || refusal.startsWith("was measured with other settings");
        if (sameSweep && !Boolean.FALSE.equals(doc.get("complete"))) {
            o.println("  " + f + " is complete at this commit: not run again");
            return false;
        }
        if (refusal != null) {
            o.println("  " + f + " " + refusal + ": the sweep starts over");
            return true;
        }
        if (!s.resumable()) {
            o.println("  " + s.op() + " cannot resume: the sweep starts over");
            return true;
        }
        List<BenchRow> rows = new ArrayList<>();
        for (Object r : (List<Object>) doc.get("rows")) {
            rows.add(BenchRow.fromJson((Map<String, Object>) r));
        }
        ctx.resume(s.op(), rows);
        o.println("  resuming " + s.op() + ": " + rows.size() + " rows measured earlier at this commit are kept");
        return true;
    }

    /** Checks every op on random problems against the CPU reference. */
    @Command(name = "verify", description = "Check every op on random problems against the fp64 CPU reference.")
    static final class VerifyCmd implements Callable<Integer> {
        @CommandLine.Spec CommandLine.Model.CommandSpec spec;
        @Option(names = "--cases", description = "random problems per op (default 20)") int cases = 20;

        @Override public Integer call() {
            return callWith(spec.commandLine().getOut(), cases);
        }

        Integer callWith(PrintWriter o, int n) {
            Device d = Device.best();
            o.println(d.isCpu() ? "No usable GPU (" + Gpu.status().reason() + "): checking the CPU backend against the reference."
                    : "Checking " + d + " against the fp64 CPU reference.");
            List<String> failures = OpChecks.runAll(d, n, o);
            o.println(failures.isEmpty() ? "verify: all checks passed" : "verify: " + failures.size() + " FAILED: " + failures);
            o.flush();
            return failures.isEmpty() ? 0 : 1;
        }
    }

    static String modulesLine(DeviceInfo info) {
        StringBuilder sb = new StringBuilder();
        for (String m : KernelModule.bundled()) {
            sb.append(sb.length() == 0 ? "" : ", ").append(m);
        }
        return sb.toString() + (info == null ? "" : "  [SASS sm_80, sm_90a; PTX compute_80 → "
                + (info.cc() == 90 ? "native sm_90a" : info.cc() >= 80 && info.cc() < 90 ? "native sm_80" : "JIT from PTX") + "]");
    }

    static String[] argsOf(String s) {
        return Arrays.stream(s.split(" ")).filter(x -> !x.isEmpty()).toArray(String[]::new);
    }
}
