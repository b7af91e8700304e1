package dev.gapfill.examples.lessons;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.ops.Bmm;
import dev.gapfill.ops.Decision;
import dev.gapfill.ops.Int8Mm;
import dev.gapfill.ops.reference.Int8MmReference;
import dev.gapfill.verify.Tolerance;
import dev.gapfill.verify.Verdict;
import dev.gapfill.verify.Verifier;

import java.io.PrintStream;
import java.util.Locale;
import java.util.Random;

/**
 * Lesson 04 — an int8 linear layer (W8A8): {@code y = x · Wᵀ} with W: [N, K] (out features, in features) and
 * x: [M, K] (tokens), computed as {@code y[m,n] ≈ aScale[m]·wScale[n]·Σ_k xq[m,k]·wq[n,k]}.
 *
 * <ol>
 *   <li>Quantize symmetrically: weights per output channel, activations per token, {@code scale = max|row| / 127},
 *   {@code q = round(v / scale)} in [−127, 127].</li>
 *   <li>Run {@link Int8Mm} with the dequantization fused into the epilogue, F16 out, through a plan (made once per
 *   shape; {@code run} allocates nothing).</li>
 *   <li>Two different errors, reported apart: the KERNEL error, against the exact integer reference (must be 0:
 *   Int8Mm's float outputs are bit-exact on every path, docs/ops/int8_mm.md), and the QUANTIZATION error, against
 *   the float layer computed in fp64 (a property of int8, not of the kernel), next to F16 and F32 matmuls of the
 *   same unquantized layer.</li>
 *   <li>On a GPU, time int8 against the F16 and F32 matmuls (CUDA events; not the benchmark method).</li>
 * </ol>
 * Size: a 4096×4096 layer and 16 tokens on a GPU; 256×512 on the CPU backend, whose reference is slow.
 */
public final class L04Int8Linear {
    private L04Int8Linear() {}

    /**
     * What the lesson checked and measured.
     *
     * @param device          where it ran
     * @param m               tokens
     * @param n               output features
     * @param k               input features
     * @param decision        what Int8Mm runs for this shape here
     * @param kernelVerdict   int8 output against the exact integer reference (bit-exact rule)
     * @param int8RelError    ‖y_int8 − y‖ / ‖y‖ against the fp64 float layer (Frobenius norms)
     * @param f16RelError     the same for an F16 matmul of the unquantized layer
     * @param f32RelError     the same for an F32 matmul
     * @param int8Micros      CUDA-event time per int8 call (NaN on the CPU)
     * @param f16Micros       per F16 call (NaN on the CPU)
     * @param f32Micros       per F32 call (NaN on the CPU)
     */
    public record Result(Device device, int m, int n, int k, Decision decision, Verdict kernelVerdict, double int8RelError,
                         double f16RelError, double f32RelError, double int8Micros, double f16Micros, double f32Micros) {}

    public static void main(String[] args) {
        Result r = run(Device.best(), System.out);
        if (!r.kernelVerdict().pass()) {
            throw new IllegalStateException("lesson check failed: " + r.kernelVerdict());
        }
        System.out.println("04_int8_linear: OK");
    }

    public static Result run(Device dev, PrintStream out) {
        int m = 16;
        int n = dev.isCuda() ? 4096 : 256;
        int k = dev.isCuda() ? 4096 : 512;
        out.printf(Locale.ROOT, "04_int8_linear on %s: linear layer W [N=%d, K=%d], activations x [M=%d, K=%d]%n", dev, n, k, m, k);

        // The float layer: Gaussian weights whose channels differ in scale (so per-channel scales matter).
        Random rnd = new Random(4);
        float[] w = new float[n * k];
        for (int j = 0; j < n; j++) {
            double channelScale = (0.25 + rnd.nextDouble()) / Math.sqrt(k);
            for (int q = 0; q < k; q++) {
                w[j * k + q] = (float) (rnd.nextGaussian() * channelScale);
            }
        }
        float[] x = new float[m * k];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) rnd.nextGaussian();
        }
        double[] exact = floatLayer(x, w, m, n, k);

        // 1. Quantize: one scale per weight row (output channel) and per activation row (token).
        float[] wScale = new float[n];
        byte[] wq = quantizeRows(w, n, k, wScale);
        float[] aScale = new float[m];
        byte[] xq = quantizeRows(x, m, k, aScale);
        out.printf(Locale.ROOT, "  weights: %d bytes as int8 + %d bytes of scales, %d as F16, %d as F32%n",
                (long) n * k, 4L * n, 2L * n * k, 4L * n * k);

        Decision decision;
        Verdict verdict;
        double relInt8;
        double int8Us = Double.NaN;
        try (Tensor hostA = Tensor.ofBytes(Device.CPU, xq, m, k); Tensor hostW = Tensor.ofBytes(Device.CPU, wq, n, k);
             Tensor hostAs = Tensor.of(Device.CPU, DType.F32, aScale, m); Tensor hostWs = Tensor.of(Device.CPU, DType.F32, wScale, n);
             Tensor a = hostA.to(dev); Tensor wt = hostW.to(dev); Tensor as = hostAs.to(dev); Tensor ws = hostWs.to(dev);
             Tensor y = Poison.poisoned(dev, DType.F16, m, n)) {
            // 2. One int8 product with the dequantization fused, F16 out, through a reusable plan.
            Int8Mm.Options o = Int8Mm.Options.dequantized(DType.F16, as, ws);
            decision = Int8Mm.decide(a, wt, o);
            out.println("  Int8Mm decides: " + decision);
            try (Int8Mm.Plan plan = Int8Mm.plan(a, wt, o, null)) {
                plan.run(a, wt, o, y);
                // 3a. Kernel error: against exact int64 sums and the fp64 epilogue, rounded once to F16.
                double[] expected = Int8MmReference.expected(hostA, hostW, hostAs, hostWs, null, DType.F16);
                verdict = Verifier.compare(y, expected, null, Tolerance.bitExact(), "exact int8 reference");
                out.println("  kernel error: " + verdict + (dev.isCpu() ? " (on the CPU the op IS the reference: an API check)" : ""));
                // 3b. Quantization error: against the unquantized float layer.
                relInt8 = relativeError(y.toFloatArray(), exact);
                if (dev.isCuda()) {
                    int8Us = EventTimer.microsPerCall(dev, 5, 50, () -> plan.run(a, wt, o, y));
                }
            }
        }
        double[] f16 = floatMatmul(dev, DType.F16, x, w, exact, m, n, k, out);
        double[] f32 = floatMatmul(dev, DType.F32, x, w, exact, m, n, k, out);
        out.printf(Locale.ROOT, "  quantization error vs the fp64 float layer (||y - y_exact|| / ||y_exact||): int8 W8A8 %.2e, "
                + "F16 matmul %.2e, F32 matmul %.2e%n", relInt8, f16[0], f32[0]);
        if (dev.isCuda()) {
            out.printf(Locale.ROOT, "  per call (CUDA events, mean of 50; not the benchmark method): int8 %.1f us (%.0f GB/s of weights), "
                    + "F16 %.1f us (%.0f GB/s), F32 %.1f us (%.0f GB/s)%n", int8Us, (double) n * k / int8Us / 1e3, f16[1],
                    2.0 * n * k / f16[1] / 1e3, f32[1], 4.0 * n * k / f32[1] / 1e3);
        }
        return new Result(dev, m, n, k, decision, verdict, relInt8, f16[0], f32[0], int8Us, f16[1], f32[1]);
    }

    /**
     * Symmetric int8 quantization of each row of {@code v} [rows, cols]: {@code scale = max|row| / 127} (1 for an
     * all-zero row), {@code q = round(v / scale)}, which stays in [−127, 127]. Writes the scales into {@code scales}.
     */
    static byte[] quantizeRows(float[] v, int rows, int cols, float[] scales) {
        byte[] q = new byte[rows * cols];
        for (int r = 0; r < rows; r++) {
            float max = 0;
            for (int c = 0; c < cols; c++) {
                max = Math.max(max, Math.abs(v[r * cols + c]));
            }
            float s = max == 0 ? 1f : max / 127f;
            scales[r] = s;
            for (int c = 0; c < cols; c++) {
                long qi = Math.round(v[r * cols + c] / s);
                q[r * cols + c] = (byte) Math.max(-127, Math.min(127, qi));
            }
        }
        return q;
    }

    /** The unquantized layer in fp64: y[i, j] = Σ_q x[i, q]·w[j, q]. */
    private static double[] floatLayer(float[] x, float[] w, int m, int n, int k) {
        double[] y = new double[m * n];
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int q = 0; q < k; q++) {
                    s += (double) x[i * k + q] * w[j * k + q];
                }
                y[i * n + j] = s;
            }
        }
        return y;
    }

    /**
     * The unquantized layer as one {@link Bmm} call in {@code dt}: x as [1, M, K], W as a shared [N, K] read
     * transposed. Returns {relative error against the fp64 layer, µs per call on a GPU or NaN}.
     */
    private static double[] floatMatmul(Device dev, DType dt, float[] x, float[] w, double[] exact, int m, int n, int k,
                                        PrintStream out) {
        Bmm.Options o = Bmm.Options.defaults().transposeB();
        try (Tensor xt = Tensor.of(dev, dt, x, 1, m, k); Tensor wt = Tensor.of(dev, dt, w, n, k);
             Tensor y = Poison.poisoned(dev, dt, 1, m, n)) {
            out.println("  " + dt + " matmul decides: " + Bmm.decide(xt, wt, o));
            Bmm.bmm(xt, wt, y, o, null);
            double rel = relativeError(y.toFloatArray(), exact);
            double us = dev.isCuda() ? EventTimer.microsPerCall(dev, 5, 50, () -> Bmm.bmm(xt, wt, y, o, null)) : Double.NaN;
            return new double[] {rel, us};
        }
    }

    /** ‖got − exact‖₂ / ‖exact‖₂; infinite if any element is NaN. */
    static double relativeError(float[] got, double[] exact) {
        double num = 0;
        double den = 0;
        for (int i = 0; i < exact.length; i++) {
            double d = got[i] - exact[i];
            num += d * d;
            den += exact[i] * exact[i];
        }
        return Double.isNaN(num) ? Double.POSITIVE_INFINITY : Math.sqrt(num / den);
    }
}
