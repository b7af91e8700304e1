package dev.gapfill.examples.bench;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.Bmm;
import dev.gapfill.ops.Decision;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Where F32 bmm between 33 and 96 should go: cuBLAS or the custom kernel. The sweep at e240d80 found AUTO on cuBLAS at
 * F32 2048 76³ (121.7 µs against the custom kernel's 89.6) and 36×44×52 (36.5 / 27.6), while 60³ and 64³ go the other
 * way (46.2 / 50.9, 47.9 / 51.7). cuBLAS's time there follows m and n rounded up to 32, the custom kernel's the
 * shape itself, so the probe times both, and AUTO, over a grid of sizes on and off multiples of 32, at three batch
 * sizes, interleaved in one run ({@link BenchContext#timeInterleaved}, L2 flushed before each path, medians of
 * {@code reps}). Each row prints the padding ratio ceil32(m)·ceil32(n) / (m·n), the two times, their ratio and the
 * variant AUTO and CUSTOM run.
 *
 * <p>Usage (GPU host): {@code java -cp ... dev.gapfill.examples.bench.BmmF32Probe [reps]}; prints a table to stdout.
 * Inputs are uniform in [-1, 1); before timing, every shape checks the custom and the AUTO outputs against cuBLAS's
 * (F32 exact arithmetic on all: each element within 1e-4 of the largest magnitude of cuBLAS's whole output, at least
 * 1e-4); a failed check is printed on its row and the probe ends with an exception after the table.
 */
public final class BmmF32Probe {
    private BmmF32Probe() { }

    record Shape(int batch, int m, int n, int k) {
        double paddingRatio() {
            return (double) ceil32(m) * ceil32(n) / ((double) m * n);
        }

        private static long ceil32(int x) {
            return (x + 31L) / 32 * 32;
        }
    }

    static List<Shape> shapes() {
        int[] squares = {36, 40, 44, 48, 52, 56, 60, 64, 68, 72, 76, 80, 84, 88, 92, 96};
        int[][] rect = {{36, 44, 52}, {40, 72, 64}, {72, 40, 64}, {52, 84, 60}, {84, 52, 60}, {68, 68, 40}, {68, 68, 96},
                {44, 44, 96}, {96, 68, 80}, {36, 96, 36}, {66, 66, 66}, {33, 33, 64}};
        List<Shape> out = new ArrayList<>();
        for (int batch : new int[] {1024, 2048, 8192}) {
            for (int s : squares) {
                out.add(new Shape(batch, s, s, s));
            }
            for (int[] r : rect) {
                out.add(new Shape(batch, r[0], r[1], r[2]));
            }
        }
        return out;
    }

    public static void main(String[] args) throws Exception {
        int reps = args.length > 0 ? Integer.parseInt(args[0]) : 30;
        run(Device.cuda(0), reps, System.out);
    }

    static void run(Device dev, int reps, PrintStream out) throws Exception {
        Bmm.Options vendor = Bmm.Options.defaults().backend(Backend.VENDOR);
        Bmm.Options custom = Bmm.Options.defaults().backend(Backend.CUSTOM);
        Bmm.Options auto = Bmm.Options.defaults();
        try (BenchContext ctx = new BenchContext(dev, 5, reps, false, m -> { }).fixedReps()) {
            out.printf("# BmmF32Probe: %s, F32 (exact fp32), %d repetitions per path, rotating order, L2 flushed before each; median µs%n",
                    ctx.info().name(), reps);
            out.printf("%-20s %6s %9s %9s %9s %7s  %-34s %s%n", "batch m×n×k", "pad", "vendor", "custom", "auto", "v/c", "AUTO runs", "CUSTOM runs");
            Random rnd = new Random(5);
            int failed = 0;
            for (Shape s : shapes()) {
                try (Tensor aFlat = BmmBench.randomDevice(ctx, DType.F32, rnd, (long) s.batch() * s.m() * s.k());
                     Tensor bFlat = BmmBench.randomDevice(ctx, DType.F32, rnd, (long) s.batch() * s.k() * s.n());
                     Tensor cV = Tensor.empty(ctx.device(), DType.F32, ctx.stream(), s.batch(), s.m(), s.n());
                     Tensor cC = Tensor.empty(ctx.device(), DType.F32, ctx.stream(), s.batch(), s.m(), s.n());
                     Tensor cA = Tensor.empty(ctx.device(), DType.F32, ctx.stream(), s.batch(), s.m(), s.n())) {
                    Tensor a = aFlat.reshape(s.batch(), s.m(), s.k());
                    Tensor b = bFlat.reshape(s.batch(), s.k(), s.n());
                    Bmm.bmm(a, b, cV, vendor, ctx.stream());
                    Bmm.bmm(a, b, cC, custom, ctx.stream());
                    Bmm.bmm(a, b, cA, auto, ctx.stream());
                    String check = compare(cV, cC, ctx);
                    if (check == null) {
                        check = compare(cV, cA, ctx);
                        check = check == null ? null : "AUTO " + check;
                    }
                    failed += check == null ? 0 : 1;
                    LinkedHashMap<String, Runnable> paths = new LinkedHashMap<>();
                    paths.put("vendor", () -> Bmm.bmm(a, b, cV, vendor, ctx.stream()));
                    paths.put("custom", () -> Bmm.bmm(a, b, cC, custom, ctx.stream()));
                    paths.put("auto", () -> Bmm.bmm(a, b, cA, auto, ctx.stream()));
                    Map<String, Timing> t = ctx.timeInterleaved(paths);
                    Decision da = Bmm.decide(a, b, auto);
                    Decision dc = Bmm.decide(a, b, custom);
                    double v = t.get("vendor").medianUs();
                    double c = t.get("custom").medianUs();
                    out.printf("%-20s %6.2f %9.2f %9.2f %9.2f %7.2f  %-34s %s%s%n", s.batch() + " " + s.m() + "×" + s.n() + "×" + s.k(),
                            s.paddingRatio(), v, c, t.get("auto").medianUs(), v / c, da.backend() + "/" + da.variant(), dc.variant(),
                            check == null ? "" : "  CHECK FAILED: " + check);
                }
            }
            if (failed > 0) {
                throw new IllegalStateException(failed + " shapes failed their check (rows marked CHECK FAILED)");
            }
        }
    }

    /** Null when the two outputs agree within 1e-4 of the largest magnitude, else what differs. */
    private static String compare(Tensor x, Tensor y, BenchContext ctx) {
        ctx.stream().synchronize();
        float[] a = x.toFloatArray();
        float[] b = y.toFloatArray();
        double max = 0;
        for (float f : a) {
            max = Math.max(max, Math.abs(f));
        }
        for (int i = 0; i < a.length; i++) {
            if (!(Math.abs(a[i] - b[i]) <= 1e-4 * Math.max(1, max))) {
                return "element " + i + ": vendor " + a[i] + ", custom " + b[i];
            }
        }
        return null;
    }
}
