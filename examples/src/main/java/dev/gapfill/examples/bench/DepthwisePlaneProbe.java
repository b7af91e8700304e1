package dev.gapfill.examples.bench;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.SystemProperty;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.Decision;
import dev.gapfill.ops.DepthwiseConv3x3;
import dev.gapfill.ops.DepthwiseConv3x3.Activation;
import dev.gapfill.ops.DepthwiseConv3x3.Layout;
import dev.gapfill.ops.DepthwiseConv3x3.Options;
import dev.gapfill.ops.DepthwiseConv3x3.Problem;
import dev.gapfill.ops.DepthwiseConv3x3Heuristics;
import dev.gapfill.ops.reference.DepthwiseConv3x3Reference;
import dev.gapfill.verify.DepthwiseConv3x3Verification;
import dev.gapfill.verify.Verdict;
import dev.gapfill.verify.Verifier;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Where F16/BF16 stride-1 NCHW depthwise should leave the whole-plane kernel ({@code nchw_plane.cu}) for nchw.cu's row
 * loop. The plane rule ({@link DepthwiseConv3x3Heuristics#usePlane}) was set against nchw.cu's rolled loop, which the
 * plane kernel beat up to 56 × 56 (32×256×56×56 F16 NONE 1.05×); since {@code 0fe90d3} exact activations at access
 * width 8 run that loop unrolled three times (0.87-0.96× the rolled loop's time in the sweep), which may move the
 * crossover below 56 × 56. The probe times, interleaved in one run ({@link BenchContext#timeInterleaved}, L2 flushed
 * before each path, medians of {@code reps}): the plane kernel ({@code gapfill.depthwise.nchwPlane=force}), nchw.cu
 * with the unrolled loop and with the rolled loop (plane off, {@code gapfill.depthwise.nchwUnroll3=true|false}) and
 * AUTO, over square planes 16-128 wide (W a multiple of 8, so the access width is 8) at two sizes: about 1.6M and 25.7M
 * outputs (the sweep's 1×384×64×64 and 32×256×56×56), for NONE, RELU, SILU and GELU_ERF (the unrolled loop forced on
 * for those too, though the rule keeps them on the rolled loop).
 *
 * <p>Before timing, every case checks the plane kernel's output against the fp64 reference (the custom tolerance:
 * bit-exact for exact activations) and every other path's output bit for bit against the plane kernel's (all of them
 * evaluate the same arithmetic); a failed check is printed on its row and the probe ends with an exception after the
 * table. A case where the plane kernel's geometry does not apply (its planes too large) says so on its row. Usage
 * (GPU host): {@code java -cp ... dev.gapfill.examples.bench.DepthwisePlaneProbe [reps [totals [sides [acts]]]]}
 * (e.g. {@code 30 3145728,6291456 16,32 NONE,RELU}); prints a table to stdout.
 */
public final class DepthwisePlaneProbe {
    private DepthwisePlaneProbe() { }

    static final long[] TOTALS = {1_572_864L, 25_690_112L};
    static final int[] SIDES = {16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128};
    static final Activation[] ACTS = {Activation.NONE, Activation.RELU, Activation.SILU, Activation.GELU_ERF};

    /**
     * N, C, H, W of the probe's cases: for each total number of outputs, square planes of each side, N = 1 below 4M
     * outputs and 32 from there, C the nearest multiple of 8 that gives the total.
     */
    static List<int[]> shapes(long[] totals, int[] sides) {
        List<int[]> out = new ArrayList<>();
        for (long total : totals) {
            for (int hw : sides) {
                int n = total >= 4_000_000L ? 32 : 1;
                long c = Math.max(8, Math.round((double) total / ((double) n * hw * hw) / 8.0) * 8);
                out.add(new int[] {n, (int) c, hw, hw});
            }
        }
        return out;
    }

    /** Arguments: [reps] [totals, comma-separated] [plane sides, comma-separated] [activations, comma-separated]. */
    public static void main(String[] args) throws Exception {
        int reps = args.length > 0 ? Integer.parseInt(args[0]) : 30;
        long[] totals = args.length > 1 ? Arrays.stream(args[1].split(",")).mapToLong(Long::parseLong).toArray() : TOTALS;
        int[] sides = args.length > 2 ? Arrays.stream(args[2].split(",")).mapToInt(Integer::parseInt).toArray() : SIDES;
        Activation[] acts = args.length > 3 ? Arrays.stream(args[3].split(",")).map(Activation::valueOf).toArray(Activation[]::new) : ACTS;
        run(Device.cuda(0), reps, shapes(totals, sides), acts, System.out);
    }

    static void run(Device dev, int reps, List<int[]> shapes, Activation[] acts, PrintStream out) throws Exception {
        String plane = DepthwiseConv3x3Heuristics.PLANE_PROPERTY;
        String unroll = DepthwiseConv3x3Heuristics.NCHW_UNROLL3_PROPERTY;
        try (BenchContext ctx = new BenchContext(dev, 5, reps, false, m -> { }).fixedReps()) {
            out.printf("# DepthwisePlaneProbe: %s, NCHW stride 1 with bias, %d repetitions per path, rotating order, L2 flushed before each; median µs%n",
                    ctx.info().name(), reps);
            out.printf("%-5s %-16s %-9s %8s %9s %9s %9s %9s %7s %7s  %-22s %s%n", "dtype", "N×C×H×W", "act", "floor", "plane",
                    "rows_u3", "rolled", "auto", "u3/pl", "fl/best", "AUTO runs", "check");
            Random rnd = new Random(11);
            int failed = 0;
            for (DType dt : new DType[] {DType.F16, DType.BF16}) {
                for (int[] s : shapes) {
                    Problem shape = new Problem(dt, Layout.NCHW, s[0], s[1], s[2], s[3], 1, Activation.NONE, true, false);
                    try (Tensor hx = HostTensors.uniform(dt, rnd, shape.inputShape()); Tensor hw = HostTensors.uniform(dt, rnd, s[1], 3, 3);
                         Tensor hb = HostTensors.uniform(dt, rnd, s[1]);
                         Tensor x = hx.to(dev); Tensor w = hw.to(dev); Tensor b = hb.to(dev);
                         Tensor yp = Tensor.empty(dev, dt, ctx.stream(), shape.outputShape());
                         Tensor yu = Tensor.empty(dev, dt, ctx.stream(), shape.outputShape());
                         Tensor yr = Tensor.empty(dev, dt, ctx.stream(), shape.outputShape());
                         Tensor ya = Tensor.empty(dev, dt, ctx.stream(), shape.outputShape())) {
                        float[] pre = DepthwiseConv3x3Reference.preActivation(hx, hw, hb, null, 1, Layout.NCHW);
                        for (Activation act : acts) {
                            Problem p = new Problem(dt, Layout.NCHW, s[0], s[1], s[2], s[3], 1, act, true, false);
                            Options auto = Options.builder().stride(1).layout(Layout.NCHW).activation(act).build();
                            Options custom = auto.withBackend(Backend.CUSTOM);
                            LinkedHashMap<String, Runnable> paths = new LinkedHashMap<>();
                            paths.put("plane", () -> SystemProperty.with(plane, "force",
                                    () -> DepthwiseConv3x3.apply(x, w, b, null, yp, custom, ctx.stream())));
                            paths.put("rows_u3", () -> SystemProperty.with(plane, "false", () -> SystemProperty.with(unroll, "true",
                                    () -> DepthwiseConv3x3.apply(x, w, b, null, yu, custom, ctx.stream()))));
                            paths.put("rolled", () -> SystemProperty.with(plane, "false", () -> SystemProperty.with(unroll, "false",
                                    () -> DepthwiseConv3x3.apply(x, w, b, null, yr, custom, ctx.stream()))));
                            paths.put("auto", () -> DepthwiseConv3x3.apply(x, w, b, null, ya, auto, ctx.stream()));
                            for (Tensor y : new Tensor[] {yp, yu, yr, ya}) {
                                y.fillBytes(0xff, ctx.stream());
                            }
                            paths.values().forEach(Runnable::run);
                            ctx.stream().synchronize();
                            String check = check(yp, yu, yr, ya, pre, act);
                            String[] forced = new String[2];
                            SystemProperty.with(plane, "force", () -> forced[0] = DepthwiseConv3x3.decide(x, w, b, null, yp, custom).variant());
                            SystemProperty.with(plane, "false", () -> SystemProperty.with(unroll, "true",
                                    () -> forced[1] = DepthwiseConv3x3.decide(x, w, b, null, yu, custom).variant()));
                            if (!forced[0].startsWith("nchw_plane") || !forced[1].contains("u3")) {
                                check += "; not timed as labelled: the plane path runs " + forced[0] + ", the rows_u3 path " + forced[1];
                            }
                            failed += check.startsWith("CHECK FAILED") ? 1 : 0;
                            Map<String, Timing> t = ctx.timeInterleaved(paths);
                            Decision da = DepthwiseConv3x3.decide(x, w, b, null, ya, auto);
                            double floor = ctx.floorUs(p.minBytes(), p.flops(), 0);
                            double tp = t.get("plane").medianUs();
                            double tu = t.get("rows_u3").medianUs();
                            double tr = t.get("rolled").medianUs();
                            double best = Math.min(tp, Math.min(tu, tr));
                            out.printf("%-5s %-16s %-9s %8.2f %9.2f %9.2f %9.2f %9.2f %7.3f %7.2f  %-22s %s%n", dt, s[0] + "×" + s[1] + "×" + s[2] + "×" + s[3],
                                    act, floor, tp, tu, tr, t.get("auto").medianUs(), tu / tp, floor / best, da.variant(), check);
                        }
                    }
                }
            }
            if (failed > 0) {
                throw new IllegalStateException(failed + " cases failed their check (rows not marked ok)");
            }
        }
    }

    /** "ok", or what failed: the plane output against the reference, the others bit for bit against the plane output. */
    private static String check(Tensor yp, Tensor yu, Tensor yr, Tensor ya, float[] pre, Activation act) {
        double[] ref = new double[pre.length];
        java.util.stream.IntStream.range(0, ref.length).parallel().forEach(i -> ref[i] = DepthwiseConv3x3Reference.activate(pre[i], act));
        Verdict v = Verifier.compare(yp, ref, null, DepthwiseConv3x3Verification.custom(act), "reference");
        if (!v.pass() || (act.isExact() && !v.bitExact())) {
            return "CHECK FAILED: plane against the reference: " + v;
        }
        java.nio.ByteBuffer bp = yp.toRaw();
        String[] names = {"rows_u3", "rolled", "auto"};
        Tensor[] ys = {yu, yr, ya};
        for (int i = 0; i < ys.length; i++) {
            java.nio.ByteBuffer bo = ys[i].toRaw();
            int at = bp.mismatch(bo);
            if (at >= 0) {
                return "CHECK FAILED: " + names[i] + " differs from plane at byte " + at;
            }
        }
        return "ok";
    }
}
