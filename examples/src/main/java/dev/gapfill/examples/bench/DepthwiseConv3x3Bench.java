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
import dev.gapfill.verify.Tolerance;
import dev.gapfill.verify.Verdict;
import dev.gapfill.verify.Verifier;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;

/**
 * The sweep of depthwise 3×3 + bias + activation: (N,C,H,W) ∈ {(1,384,64,64), (8,96,112,112),
 * (32,256,56,56), (32,512,28,28), (64,1024,14,14), (16,64,224,224)} × {NCHW, NHWC} × {F16, BF16, F32} ×
 * act ∈ {NONE, RELU, SILU, GELU (erf)}, stride 1 everywhere and stride 2 for 8×96×112×112,
 * 32×256×56×56 and 16×64×224×224; a bias in every case, no residual. Paths timed interleaved: the
 * cuDNN composition (VENDOR), the fused kernel (CUSTOM) and AUTO, each with its peers (below).
 *
 * <p>Every timed path writes the same output tensor, so two columns differ only in the path, not in where the output
 * lies: on short launches the output's address alone moved one kernel's median by up to ±6 % (AUTO and CUSTOM ran the
 * same plane kernel into two tensors at {@code 0fe90d3}, {@code e708fb4} and {@code 8e00708}, up to 6 % apart with the
 * sign changing between runs). The peer {@code custom_other_buffer} keeps that effect in view: the custom path once more,
 * into a second tensor allocated beside the first.
 *
 * <p>Before timing, every element of the custom and the vendor result is compared with the
 * reference: the row's {@code check} is the custom path's verdict (bit-exact for NONE/RELU, ≤ 1 ulp for
 * SILU/GELU); the vendor's bit-identical fraction, max ulp and pass flag go into {@code peers}
 * ({@code vendor_identical_fraction}, {@code vendor_max_ulp}, {@code vendor_check_pass}).
 * Floor: (|x| + |y| + |w| + |bias|) bytes over the measured copy bandwidth (the 18 flops per output
 * are far below the fp32 rate at these sizes).
 */
public final class DepthwiseConv3x3Bench implements BenchSuite {
    private static final int[][] SHAPES = {{1, 384, 64, 64}, {8, 96, 112, 112}, {32, 256, 56, 56}, {32, 512, 28, 28}, {64, 1024, 14, 14},
            {16, 64, 224, 224}};
    private static final boolean[] STRIDE2 = {false, true, true, false, false, true};
    private static final Activation[] ACTS = {Activation.NONE, Activation.RELU, Activation.SILU, Activation.GELU_ERF};

    @Override public String op() { return "depthwise_conv3x3"; }

    @Override public boolean resumable() { return true; }

    /** Whether the quick sweep's stride-1 case {@code sh} with one activation is among the rows an earlier run left. */
    private boolean quickDone(BenchContext ctx, DType dt, int[] sh, Layout l, Activation a) {
        return ctx.done(op(), dt.name(), "N", sh[0], "C", sh[1], "H", sh[2], "W", sh[3], "stride", 1, "layout", l.name(), "act", a.name());
    }

    @Override public List<BenchRow> run(BenchContext ctx) {
        List<BenchRow> rows = ctx.rows(op());
        Random rnd = new Random(4);
        if (ctx.quick()) {
            // the anchor's case (f16 32x256x56x56 + SiLU, both layouts) and one small f32 case
            // (a case measured by an earlier quick run of this commit is kept, not run again: bench --quick --resume)
            for (Layout l : Layout.values()) {
                if (ctx.wants(DType.F16) && !quickDone(ctx, DType.F16, new int[] {32, 256, 56, 56}, l, Activation.SILU)) {
                    rows.addAll(runCase(ctx, rnd, new int[] {32, 256, 56, 56}, 1, l, DType.F16, new Activation[] {Activation.SILU}));
                }
            }
            if (ctx.wants(DType.F32) && !quickDone(ctx, DType.F32, new int[] {1, 384, 64, 64}, Layout.NHWC, Activation.NONE)) {
                rows.addAll(runCase(ctx, rnd, new int[] {1, 384, 64, 64}, 1, Layout.NHWC, DType.F32, new Activation[] {Activation.NONE}));
            }
            return rows;
        }
        for (int si = 0; si < SHAPES.length; si++) {
            for (int stride = 1; stride <= (STRIDE2[si] ? 2 : 1); stride++) {
                for (Layout l : Layout.values()) {
                    for (DType dt : new DType[] {DType.F16, DType.BF16, DType.F32}) {
                        if (!ctx.wants(dt)) {
                            continue;  // bench --dtype
                        }
                        int[] sh = SHAPES[si];
                        int st = stride;
                        if (java.util.Arrays.stream(ACTS).allMatch(a -> ctx.done(op(), dt.name(), "N", sh[0], "C", sh[1], "H", sh[2], "W", sh[3],
                                "stride", st, "layout", l.name(), "act", a.name()))) {
                            continue;  // measured by an earlier run of this commit (bench --resume)
                        }
                        rows.addAll(runCase(ctx, rnd, SHAPES[si], stride, l, dt, ACTS));
                    }
                }
            }
        }
        return rows;
    }

    /** One (shape, stride, layout, dtype): inputs and the reference once, then one row per activation. */
    private List<BenchRow> runCase(BenchContext ctx, Random rnd, int[] s, int stride, Layout layout, DType dt, Activation[] acts) {
        List<BenchRow> rows = new ArrayList<>();
        Problem shape = new Problem(dt, layout, s[0], s[1], s[2], s[3], stride, Activation.NONE, true, false);
        Device dev = ctx.device();
        try (Tensor hx = random(dt, rnd, shape.inputShape()); Tensor hw = random(dt, rnd, s[1], 3, 3); Tensor hb = random(dt, rnd, s[1]);
             Tensor x = hx.to(dev); Tensor w = hw.to(dev); Tensor b = hb.to(dev);
             Tensor yv = Tensor.empty(dev, dt, ctx.stream(), shape.outputShape());
             Tensor yc = Tensor.empty(dev, dt, ctx.stream(), shape.outputShape());
             Tensor ya = Tensor.empty(dev, dt, ctx.stream(), shape.outputShape())) {
            float[] pre = DepthwiseConv3x3Reference.preActivation(hx, hw, hb, null, stride, layout);
            double[] mag = DepthwiseConv3x3Reference.magnitudes(hx, hw, hb, null, stride, layout);
            for (Activation act : acts) {
                Problem p = new Problem(dt, layout, s[0], s[1], s[2], s[3], stride, act, true, false);
                Options base = Options.builder().stride(stride).layout(layout).activation(act).build();
                Options vendor = base.withBackend(Backend.VENDOR);
                Options custom = base.withBackend(Backend.CUSTOM);
                double[] ref = new double[pre.length];
                java.util.stream.IntStream.range(0, ref.length).parallel().forEach(i -> ref[i] = DepthwiseConv3x3Reference.activate(pre[i], act));
                yc.fillBytes(0xff, ctx.stream());
                yv.fillBytes(0xff, ctx.stream());
                DepthwiseConv3x3.apply(x, w, b, null, yc, custom, ctx.stream());
                DepthwiseConv3x3.apply(x, w, b, null, yv, vendor, ctx.stream());
                ctx.stream().synchronize();
                Verdict vc = Verifier.compare(yc, ref, null, DepthwiseConv3x3Verification.custom(act), "reference");
                Tolerance vt = DepthwiseConv3x3Verification.vendor(dt, act);
                Verdict vv = Verifier.compare(yv, ref, mag, vt, "reference");
                Decision auto = DepthwiseConv3x3.decide(x, w, b, null, yc, base);

                LinkedHashMap<String, Runnable> paths = new LinkedHashMap<>();
                // checked above into yv and yc; timed, like every peer but custom_other_buffer, into yc
                paths.put("vendor", () -> DepthwiseConv3x3.apply(x, w, b, null, yc, vendor, ctx.stream()));
                paths.put("custom", () -> DepthwiseConv3x3.apply(x, w, b, null, yc, custom, ctx.stream()));
                paths.put("auto", () -> DepthwiseConv3x3.apply(x, w, b, null, yc, base, ctx.stream()));
                // Peers, each checked against the reference before the timing: where a ring kernel runs CUSTOM (stride
                // 1, or stride 2 where useRingS2), nhwc.cu's register-pipelined kernel (nhwc_regs); on every
                // vectorisable stride-2 NHWC row, the stride-2 ring in each geometry the rules did not pick
                // (nhwc_ring_s2: 2 x 4, nhwc_ring_s2_c2w2: 2 x 2); on F16/BF16 stride-1 NCHW rows at access width 8, nchw.cu's
                // row loop the rule did not pick (nchw_rolled, or nchw_u3: unrolled three times); on NCHW stride-1 rows where
                // the whole-plane kernel's geometry applies, the one of nchw.cu and the plane kernel the rule did not pick
                // Each peer is a function of the output tensor: checked into ya (poisoned first), timed into yc like the
                // three columns above, except custom_other_buffer, the custom path timed into ya (the placement control).
                Map<String, Function<Tensor, Runnable>> peerPaths = new LinkedHashMap<>();
                boolean vectorS2 = layout == Layout.NHWC && stride == 2 && s[1] % DepthwiseConv3x3Heuristics.ringVectorChannels(p) == 0;
                boolean ringS2 = DepthwiseConv3x3Heuristics.useRingS2(p);
                Function<Tensor, Runnable> customCall = y -> () -> DepthwiseConv3x3.apply(x, w, b, null, y, custom, ctx.stream());
                peerPaths.put("custom_other_buffer", customCall);
                if (DepthwiseConv3x3Heuristics.useRing(p) || ringS2) {
                    String key = ringS2 ? DepthwiseConv3x3Heuristics.RING_S2_PROPERTY : DepthwiseConv3x3Heuristics.RING_PROPERTY;
                    peerPaths.put("nhwc_regs", y -> () -> SystemProperty.with(key, "false", customCall.apply(y)));
                }
                if (dt == DType.F32 && stride == 1 && DepthwiseConv3x3Heuristics.useRing(p)) {  // the F32 ring geometry not picked
                    String other = DepthwiseConv3x3Heuristics.ringConfig(p) == DepthwiseConv3x3Heuristics.RingConfig.C2W2_F32 ? "c2w4" : "c2w2";
                    peerPaths.put("nhwc_ring_f32_" + other, y -> () -> SystemProperty.with(DepthwiseConv3x3Heuristics.RING_F32_GEOMETRY_PROPERTY, other,
                            customCall.apply(y)));
                }
                if (layout == Layout.NCHW && stride == 1 && dt != DType.F32 && !DepthwiseConv3x3Heuristics.usePlane(p)
                        && DepthwiseConv3x3Heuristics.nchwVectorWidth(p) == 8) {  // nchw.cu's row loop the rule did not pick
                    boolean u3 = DepthwiseConv3x3Heuristics.useNchwUnroll3(p, 8);
                    peerPaths.put(u3 ? "nchw_rolled" : "nchw_u3", y -> () -> SystemProperty.with(DepthwiseConv3x3Heuristics.NCHW_UNROLL3_PROPERTY,
                            u3 ? "false" : "true", customCall.apply(y)));
                }
                if (layout == Layout.NCHW && stride == 1 && DepthwiseConv3x3Heuristics.planeGrid(p, true, true) != null) {
                    // the NCHW stride-1 kernel the plane rule did not pick: nchw.cu (nchw_rows, with its own loop rule)
                    // where the plane kernel runs, else the plane kernel (nchw_plane) wherever its geometry applies
                    boolean planeRuns = DepthwiseConv3x3Heuristics.usePlane(p);
                    peerPaths.put(planeRuns ? "nchw_rows" : "nchw_plane", y -> () -> SystemProperty.with(DepthwiseConv3x3Heuristics.PLANE_PROPERTY,
                            planeRuns ? "false" : "force", customCall.apply(y)));
                }
                if (vectorS2) {
                    DepthwiseConv3x3Heuristics.RingConfig picked = ringS2 ? DepthwiseConv3x3Heuristics.ringS2Config(p) : null;
                    for (DepthwiseConv3x3Heuristics.RingConfig g : new DepthwiseConv3x3Heuristics.RingConfig[] {
                            DepthwiseConv3x3Heuristics.RingConfig.C2W4, DepthwiseConv3x3Heuristics.RingConfig.C2W2}) {
                        if (g != picked) {
                            String geometry = "c2w" + g.columnsPerThread();
                            peerPaths.put(g == DepthwiseConv3x3Heuristics.RingConfig.C2W4 ? "nhwc_ring_s2" : "nhwc_ring_s2_c2w2",
                                    y -> () -> SystemProperty.with(DepthwiseConv3x3Heuristics.RING_S2_GEOMETRY_PROPERTY, geometry,
                                            () -> SystemProperty.with(DepthwiseConv3x3Heuristics.RING_S2_PROPERTY, "true", customCall.apply(y))));
                        }
                    }
                }
                Map<String, Verdict> peerChecks = new LinkedHashMap<>();
                for (Map.Entry<String, Function<Tensor, Runnable>> e : peerPaths.entrySet()) {
                    ya.fillBytes(0xff, ctx.stream());
                    e.getValue().apply(ya).run();
                    ctx.stream().synchronize();
                    peerChecks.put(e.getKey(), Verifier.compare(ya, ref, null, DepthwiseConv3x3Verification.custom(act), "reference"));
                    paths.put(e.getKey(), e.getValue().apply(e.getKey().equals("custom_other_buffer") ? ya : yc));
                }
                Map<String, Timing> t = ctx.timeInterleaved(paths);
                Map<String, double[]> spread = new LinkedHashMap<>();
                t.forEach((k, v) -> spread.put(k, new double[] {v.p10Us(), v.p90Us()}));
                Map<String, Double> peers = new LinkedHashMap<>();
                peers.put("vendor_identical_fraction", vv.identicalFraction());
                peers.put("vendor_max_ulp", (double) vv.maxUlp());
                peers.put("vendor_check_pass", vv.pass() ? 1.0 : 0.0);
                peerChecks.forEach((k, v) -> {
                    peers.put(k + "_us", t.get(k).medianUs());
                    peers.put(k + "_check_pass", v.pass() && (!act.isExact() || v.bitExact()) ? 1.0 : 0.0);
                });
                long bytes = p.minBytes();
                double floor = ctx.floorUs(bytes, p.flops(), 0);
                rows.add(new BenchRow(op(), dt.name(),
                        BenchRow.shape("N", s[0], "C", s[1], "H", s[2], "W", s[3], "stride", stride, "layout", layout.name(), "act", act.name()),
                        auto.variant(), t.get("vendor").medianUs(), t.get("custom").medianUs(), t.get("auto").medianUs(),
                        auto.backend() + "/" + auto.variant(), floor, bytes, p.flops(), peers, spread,
                        new BenchRow.Check("reference (custom; the vendor composition and the peers must pass too)", vc.bitExact(),
                                vc.maxUlp(), vc.maxRelErr(), vc.pass() && vv.pass() && peerChecks.values().stream()
                                        .allMatch(v -> v.pass() && (!act.isExact() || v.bitExact())))));
                ctx.progress(String.format("depthwise %s: vendor %.1f us, custom %.1f us, auto %.1f us (%s), floor %.1f us; custom %s, vendor %.4f identical",
                        p, t.get("vendor").medianUs(), t.get("custom").medianUs(), t.get("auto").medianUs(), auto.backend(), floor,
                        vc.pass() ? "pass" : "FAIL", vv.identicalFraction()));
            }
        }
        return rows;
    }

    /** Uniform values in [-1, 1) rounded to {@code dt}, on the host. */
    private static Tensor random(DType dt, Random rnd, long... shape) {
        return HostTensors.uniform(dt, rnd, shape);
    }
}
