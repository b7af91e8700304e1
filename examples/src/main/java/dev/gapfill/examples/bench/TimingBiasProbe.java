package dev.gapfill.examples.bench;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.Bmm;
import dev.gapfill.ops.Decision;

import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * A self-check of the benchmark harness ({@link BenchContext#timeInterleaved}), for the question the bmm sweeps left
 * open: on rows of 4–6 µs where AUTO runs the very kernel of the custom column, AUTO's median came out 0.2–0.4 µs
 * above the custom one in every sweep since the rotating order (docs/ops/bmm.md). Per small bmm shape it times, in one
 * interleaved run, the vendor path, the forced custom path twice (two lambdas doing the same), AUTO twice, and the
 * custom path behind a host busy-wait of 20 µs and of 100 µs (the flush before each path takes about 70 µs of GPU
 * time, so 20 µs should not show and 100 µs must: the positive control that host time can leak into a path's events).
 *
 * <p>Reading it: twin columns apart by more than their noise mean a bias of the harness itself (position or lambda);
 * AUTO apart from both custom twins with the twins together means AUTO's call differs on the GPU side; a +20 µs column
 * above custom means the host's time per call shows in the events. Usage (GPU host):
 * {@code java -cp ... dev.gapfill.examples.bench.TimingBiasProbe [reps [trials]]}; prints two tables to stdout (the second:
 * {@link #sweepConfig}). Both time exactly the repetitions asked for ({@link BenchContext#fixedReps}): the sweeps
 * themselves extend cases under {@link BenchContext#SHORT_CASE_US} µs since this probe's result.
 */
public final class TimingBiasProbe {
    private TimingBiasProbe() { }

    private record Shape(DType dt, int batch, int m, int n, int k) {
        String label() { return dt + " " + batch + " " + m + "x" + n + "x" + k; }
    }

    private static final Bmm.Options VENDOR = Bmm.Options.defaults().backend(Backend.VENDOR);
    private static final Bmm.Options CUSTOM = Bmm.Options.defaults().backend(Backend.CUSTOM);
    private static final Bmm.Options AUTO = Bmm.Options.defaults();

    /** Random A and B of one shape and an output; closing it frees all three. */
    private record Problem(BenchContext ctx, Tensor aFlat, Tensor bFlat, Tensor c, Tensor a, Tensor b) implements AutoCloseable {
        static Problem of(BenchContext ctx, Shape s, Random rnd) {
            Tensor aFlat = BmmBench.randomDevice(ctx, s.dt(), rnd, (long) s.batch() * s.m() * s.k());
            Tensor bFlat = BmmBench.randomDevice(ctx, s.dt(), rnd, (long) s.batch() * s.k() * s.n());
            Tensor c = Tensor.empty(ctx.device(), s.dt(), ctx.stream(), s.batch(), s.m(), s.n());
            return new Problem(ctx, aFlat, bFlat, c, aFlat.reshape(s.batch(), s.m(), s.k()), bFlat.reshape(s.batch(), s.k(), s.n()));
        }

        /** One call of bmm with these options on the context's stream. */
        Runnable call(Bmm.Options o) {
            return () -> Bmm.bmm(a, b, c, o, ctx.stream());
        }

        @Override public void close() {
            c.close();
            bFlat.close();
            aFlat.close();
        }
    }

    static final List<Shape> SHAPES = List.of(
            new Shape(DType.F16, 512, 8, 8, 8), new Shape(DType.BF16, 2048, 8, 8, 8), new Shape(DType.F16, 2048, 16, 16, 16),
            new Shape(DType.F32, 512, 16, 16, 16), new Shape(DType.BF16, 512, 32, 32, 32), new Shape(DType.F32, 8192, 8, 8, 8),
            new Shape(DType.F16, 2048, 64, 64, 64));

    public static void main(String[] args) throws Exception {
        int reps = args.length > 0 ? Integer.parseInt(args[0]) : 101;
        int trials = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        run(Device.cuda(0), reps, System.out);
        sweepConfig(Device.cuda(0), trials, System.out);
    }

    /**
     * The sweep's own configuration: three paths (vendor, custom, AUTO), 30 repetitions, medians; repeated
     * {@code trials} times per shape, each trial also with AUTO replaced by a second custom lambda. Prints, per shape,
     * the mean over trials of AUTO's median minus custom's, and of custom' minus custom, with how many trials came out
     * positive: a harness bias shows in both, an AUTO effect in the first only.
     */
    static void sweepConfig(Device dev, int trials, PrintStream out) throws Exception {
        try (BenchContext ctx = new BenchContext(dev, 5, 30, false, m -> { }).fixedReps()) {
            out.printf("# the sweep's configuration: {vendor, custom, auto} and {vendor, custom, custom'}, 30 repetitions each, %d trials per shape%n", trials);
            out.printf("%-22s %10s %22s %22s%n", "shape", "custom µs", "auto - custom µs (>0)", "custom' - custom µs (>0)");
            Random rnd = new Random(11);
            for (Shape s : SHAPES) {
                try (Problem pr = Problem.of(ctx, s, rnd)) {
                    double sumAuto = 0, sumTwin = 0, sumCustom = 0;
                    int posAuto = 0, posTwin = 0;
                    for (int trial = 0; trial < trials; trial++) {
                        LinkedHashMap<String, Runnable> withAuto = new LinkedHashMap<>();
                        withAuto.put("vendor", pr.call(VENDOR));
                        withAuto.put("custom", pr.call(CUSTOM));
                        withAuto.put("auto", pr.call(AUTO));
                        Map<String, Timing> t1 = ctx.timeInterleaved(withAuto);
                        LinkedHashMap<String, Runnable> withTwin = new LinkedHashMap<>();
                        withTwin.put("vendor", pr.call(VENDOR));
                        withTwin.put("custom", pr.call(CUSTOM));
                        withTwin.put("custom'", pr.call(CUSTOM));
                        Map<String, Timing> t2 = ctx.timeInterleaved(withTwin);
                        double dAuto = t1.get("auto").medianUs() - t1.get("custom").medianUs();
                        double dTwin = t2.get("custom'").medianUs() - t2.get("custom").medianUs();
                        sumAuto += dAuto;
                        sumTwin += dTwin;
                        sumCustom += t1.get("custom").medianUs();
                        posAuto += dAuto > 0 ? 1 : 0;
                        posTwin += dTwin > 0 ? 1 : 0;
                    }
                    out.printf("%-22s %10.2f %22s %22s%n", s.label(), sumCustom / trials,
                            String.format("%+.3f (%d/%d)", sumAuto / trials, posAuto, trials), String.format("%+.3f (%d/%d)", sumTwin / trials, posTwin, trials));
                }
            }
        }
    }

    static void run(Device dev, int reps, PrintStream out) throws Exception {
        try (BenchContext ctx = new BenchContext(dev, 5, reps, false, m -> { }).fixedReps()) {
            out.printf("# TimingBiasProbe: %s, %d repetitions per path, rotating order (BenchContext.timeInterleaved), L2 flushed before each%n",
                    ctx.info().name(), reps);
            out.println("# median µs (p10-p90); custom' and auto' are second lambdas doing the same as custom and auto");
            out.printf("%-22s %-22s %-17s %-17s %-17s %-17s %-17s %-17s %-17s%n", "shape", "AUTO runs", "vendor", "custom", "custom'",
                    "auto", "auto'", "custom+20us host", "custom+100us host");
            Random rnd = new Random(7);
            for (Shape s : SHAPES) {
                try (Problem pr = Problem.of(ctx, s, rnd)) {
                    Runnable custom = pr.call(CUSTOM);
                    Decision d = Bmm.decide(pr.a(), pr.b(), AUTO);
                    LinkedHashMap<String, Runnable> paths = new LinkedHashMap<>();
                    paths.put("vendor", pr.call(VENDOR));
                    paths.put("custom", custom);
                    paths.put("custom'", pr.call(CUSTOM));
                    paths.put("auto", pr.call(AUTO));
                    paths.put("auto'", pr.call(AUTO));
                    paths.put("custom+20", () -> {
                        spin(20_000);
                        custom.run();
                    });
                    paths.put("custom+100", () -> {
                        spin(100_000);
                        custom.run();
                    });
                    Map<String, Timing> t = ctx.timeInterleaved(paths);
                    StringBuilder row = new StringBuilder(String.format("%-22s %-22s", s.label(),
                            d.backend() + "/" + d.variant()));
                    for (Timing x : t.values()) {
                        row.append(String.format(" %-17s", String.format("%.2f (%.2f-%.2f)", x.medianUs(), x.p10Us(), x.p90Us())));
                    }
                    out.println(row);
                }
            }
        }
    }

    private static void spin(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }
}
