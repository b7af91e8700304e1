package dev.gapfill.examples.lessons;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.HalfFloats;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.Decision;
import dev.gapfill.ops.DepthwiseConv3x3;
import dev.gapfill.ops.DepthwiseConv3x3.Activation;
import dev.gapfill.ops.DepthwiseConv3x3.Layout;
import dev.gapfill.ops.DepthwiseConv3x3.Options;
import dev.gapfill.verify.DepthwiseConv3x3Verification;
import dev.gapfill.verify.Verdict;
import dev.gapfill.verify.Verifier;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * Lesson 03 — a depthwise 3×3 convolution with its bias and SiLU in one call:
 * {@code y[n,c,i,j] = silu(bias[c] + Σ_{p,q} w[c,p,q]·x[n,c,i+p−1,j+q−1])}, zero padding, stride 1.
 *
 * <ol>
 *   <li>One call, one pass over memory, one rounding: the fused result differs from "conv, round to F16, add
 *   bias, round, SiLU, round", which the lesson measures. Where the bias nearly cancels the conv, the early
 *   rounding's absolute error is large next to the small result, so those elements differ by many ulps.</li>
 *   <li>Layouts: the same tensors in NCHW ([N, C, H, W]) and NHWC ([N, H, W, C]) give the same values;
 *   {@code Options.layout} says which one x, y (and a residual) are in; w is [C, 3, 3] either way.</li>
 *   <li>The bit-exactness rule (docs/verification.md): the reference fixes the order of the nine fp32 fmas, so
 *   Gapfill's kernels reproduce it bit for bit when the activation is exact in fp32 (NONE, RELU, RELU6) and
 *   within 1 ulp for SILU/GELU; cuDNN (VENDOR) has its own order and is held to an accumulation bound.</li>
 * </ol>
 */
public final class L03DepthwiseConv {
    private L03DepthwiseConv() {}

    /**
     * What the lesson checked and measured.
     *
     * @param device            where it ran
     * @param decisions         AUTO's decision for the SiLU problem per layout
     * @param siluVerdicts      the fused SiLU output per layout against the reference, with the policy of the path that ran
     * @param layoutsIdentical  elements with identical bits in the NCHW and NHWC outputs (after transposing back)
     * @param elements          output elements
     * @param reluVerdict       RELU through the custom kernels (GPU) or the reference (CPU), bit-exact rule
     * @param unfusedDiffering  elements where rounding after every step differs from the fused single rounding
     * @param unfusedMaxUlp     largest such difference in F16 ulps
     * @param microsPerCall     CUDA-event time of the fused call per layout (empty on the CPU)
     */
    public record Result(Device device, Map<Layout, Decision> decisions, Map<Layout, Verdict> siluVerdicts, long layoutsIdentical,
                         long elements, Verdict reluVerdict, long unfusedDiffering, long unfusedMaxUlp,
                         Map<Layout, Double> microsPerCall) {
        public boolean allPass() {
            return siluVerdicts.size() == 2 && siluVerdicts.values().stream().allMatch(Verdict::pass) && reluVerdict.pass();
        }
    }

    // A mobile-net-sized block: batch 2, 96 channels, 40x40 feature maps, F16.
    static final DType DTYPE = DType.F16;
    static final int N = 2;
    static final int C = 96;
    static final int H = 40;
    static final int W = 40;

    public static void main(String[] args) {
        Result r = run(Device.best(), System.out);
        if (!r.allPass()) {
            throw new IllegalStateException("lesson check failed: " + r);
        }
        System.out.println("03_depthwise_conv: OK");
    }

    public static Result run(Device dev, PrintStream out) {
        out.printf(Locale.ROOT, "03_depthwise_conv on %s: %s N=%d C=%d H=%d W=%d, 3x3 depthwise + bias + SiLU%n", dev, DTYPE, N, C, H, W);
        Random rnd = new Random(3);
        Map<Layout, Decision> decisions = new EnumMap<>(Layout.class);
        Map<Layout, Verdict> verdicts = new EnumMap<>(Layout.class);
        Map<Layout, Double> times = new EnumMap<>(Layout.class);
        try (Tensor hostX = Poison.random(Device.CPU, DTYPE, rnd, N, C, H, W);
             Tensor hostXt = transposeLayout(hostX, true);
             Tensor hostW = Poison.random(Device.CPU, DTYPE, rnd, C, 3, 3);
             Tensor hostB = Poison.random(Device.CPU, DTYPE, rnd, C);
             Tensor x = hostX.to(dev); Tensor xt = hostXt.to(dev); Tensor w = hostW.to(dev); Tensor b = hostB.to(dev);
             Tensor y = Poison.poisoned(dev, DTYPE, N, C, H, W);
             Tensor yt = Poison.poisoned(dev, DTYPE, N, H, W, C)) {

            // 1. The fused call in both layouts; each result checked with the rule of the path that ran.
            for (Layout layout : Layout.values()) {
                boolean nchw = layout == Layout.NCHW;
                Options o = new Options(1, layout, Activation.SILU, Backend.AUTO);
                Tensor in = nchw ? x : xt;
                Tensor res = nchw ? y : yt;
                Decision d = DepthwiseConv3x3.decide(in, w, b, null, res, o);
                DepthwiseConv3x3.apply(in, w, b, null, res, o, null);
                Verdict v = d.backend() == Backend.VENDOR
                        ? DepthwiseConv3x3Verification.checkVendor(res, nchw ? hostX : hostXt, hostW, hostB, null, o)
                        : DepthwiseConv3x3Verification.checkCustom(res, nchw ? hostX : hostXt, hostW, hostB, null, o);
                decisions.put(layout, d);
                verdicts.put(layout, v);
                out.println("  " + layout + ": " + d);
                out.println("    " + v + (dev.isCpu() ? " (on the CPU the op IS the reference: an API and verifier check)" : ""));
                if (dev.isCuda()) {
                    double us = EventTimer.microsPerCall(dev, 5, 50, () -> DepthwiseConv3x3.apply(in, w, b, null, res, o, null));
                    times.put(layout, us);
                    long bytes = 2L * N * C * H * W * DTYPE.bytes(); // x read once, y written once
                    out.printf(Locale.ROOT, "    %.1f us per call, %.0f GB/s of x+y (CUDA events, mean of 50; not the benchmark method)%n",
                            us, bytes / us / 1e3);
                }
            }

            // 2. Same numbers in both layouts? Transpose the NHWC result back and compare bits.
            long same;
            try (Tensor hostY = y.to(Device.CPU); Tensor hostYt = yt.to(Device.CPU); Tensor back = transposeLayout(hostYt, false)) {
                same = identicalBits(hostY, back);
            }
            long elements = (long) N * C * H * W;
            out.printf(Locale.ROOT, "  NCHW vs NHWC: %d of %d elements have identical bits%n", same, elements);

            // 3. Why fuse: the conv alone rounded to F16, then bias, then SiLU, each rounded again, against y.
            long[] diff = unfusedDifference(x, w, hostB.toFloatArray(), y);
            out.printf(Locale.ROOT, "  rounding after each of the three steps instead of once: %d of %d elements differ, by up to %d ulp "
                    + "(and the intermediate is written and read back twice more)%n", diff[0], elements, diff[1]);

            // 4. The bit-exact rule: with an exact activation the custom kernels must equal the reference bit for bit.
            Options relu = new Options(1, Layout.NCHW, Activation.RELU, dev.isCuda() ? Backend.CUSTOM : Backend.AUTO);
            DepthwiseConv3x3.apply(x, w, b, null, y, relu, null);
            Verdict reluVerdict = DepthwiseConv3x3Verification.checkCustom(y, hostX, hostW, hostB, null, relu);
            out.println("  RELU, " + (dev.isCuda() ? "CUSTOM forced" : "reference") + ": " + reluVerdict);
            return new Result(dev, decisions, verdicts, same, elements, reluVerdict, diff[0], diff[1], times);
        }
    }

    /**
     * Runs the conv alone (no bias, no activation: rounded to F16), adds the bias and applies SiLU on the host with
     * an F16 rounding after each step, and counts where that differs from the fused NCHW result {@code fused}.
     */
    private static long[] unfusedDifference(Tensor x, Tensor w, float[] bias, Tensor fused) {
        try (Tensor conv = DepthwiseConv3x3.apply(x, w, null, Options.defaults())) {
            float[] c = conv.toFloatArray();
            ByteBuffer f = fused.toRaw();
            long differing = 0;
            long maxUlp = 0;
            for (int i = 0; i < c.length; i++) {
                int ch = (i / (H * W)) % C;
                float v1 = HalfFloats.halfToFloat(HalfFloats.floatToHalf(c[i] + bias[ch]));  // + bias, rounded to F16
                short v2 = HalfFloats.doubleToHalf(v1 / (1.0 + Math.exp(-(double) v1)));     // SiLU, rounded to F16
                long ulp = Verifier.ulpDistance(DTYPE, v2 & 0xffff, f.getShort(2 * i) & 0xffff);
                if (ulp != 0) {
                    differing++;
                    maxUlp = Math.max(maxUlp, ulp);
                }
            }
            return new long[] {differing, maxUlp};
        }
    }

    /** NCHW ↔ NHWC on the host: [N, C, H·W] and [N, H·W, C] differ only in where C sits. */
    private static Tensor transposeLayout(Tensor t, boolean toNhwc) {
        float[] v = t.toFloatArray();
        float[] o = new float[v.length];
        for (int n = 0; n < N; n++) {
            for (int c = 0; c < C; c++) {
                for (int i = 0; i < H * W; i++) {
                    int nchw = (n * C + c) * H * W + i;
                    int nhwc = (n * H * W + i) * C + c;
                    o[toNhwc ? nhwc : nchw] = v[toNhwc ? nchw : nhwc];
                }
            }
        }
        return toNhwc ? Tensor.of(Device.CPU, t.dtype(), o, N, H, W, C) : Tensor.of(Device.CPU, t.dtype(), o, N, C, H, W);
    }

    private static long identicalBits(Tensor a, Tensor b) {
        ByteBuffer x = a.toRaw();
        ByteBuffer y = b.toRaw();
        long same = 0;
        for (int i = 0; i < a.numel(); i++) {
            if (x.getShort(2 * i) == y.getShort(2 * i)) {
                same++;
            }
        }
        return same;
    }
}
