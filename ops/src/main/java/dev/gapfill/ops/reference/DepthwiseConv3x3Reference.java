package dev.gapfill.ops.reference;

import dev.gapfill.core.Tensor;
import dev.gapfill.ops.DepthwiseConv3x3.Activation;
import dev.gapfill.ops.DepthwiseConv3x3.Layout;

import java.util.stream.IntStream;

/**
 * CPU reference of {@link dev.gapfill.ops.DepthwiseConv3x3}; it DEFINES the op's arithmetic, which the
 * custom kernels reproduce bit for bit:
 * <ol>
 *   <li>{@code acc = 0f}; for p = 0..2, for q = 0..2: {@code acc = fma(w[c,p,q], x[n,c,s·i+p−1,s·j+q−1], acc)}
 *       in fp32 ({@link Math#fma(float, float, float)}: one rounding per tap), with x = +0 outside the
 *       image (the fma is still done, so signed zeros and NaN/Inf weights behave the same everywhere);</li>
 *   <li>{@code v = acc + bias[c]} in fp32 (only when a bias is given), then {@code v = v + res} in fp32
 *       (only when a residual is given);</li>
 *   <li>the activation: NONE, RELU ({@code v < 0 ? 0 : v}), RELU6 ({@code v < 0 ? 0 : v > 6 ? 6 : v}) are
 *       exact in fp32; SILU and the GELUs are evaluated in fp64 from the fp32 {@code v} with the
 *       cancellation-free forms {@code v/(1+e^−v)}, {@code ½·v·erfc(−v/√2)} and
 *       {@code v/(1+e^(−2t))}, {@code t = √(2/π)·fma(0.044715·v, v·v, v)};</li>
 *   <li>one rounding to the output dtype (round to nearest even).</li>
 * </ol>
 * w and bias are in x's dtype and widened exactly to fp32.
 */
public final class DepthwiseConv3x3Reference {
    private DepthwiseConv3x3Reference() {}

    private static final double SQRT1_2 = 0.70710678118654752440;
    private static final double SQRT_2_OVER_PI = 0.79788456080286535588;
    private static final double INV_SQRT_PI = 0.56418958354775628695;

    /** Writes the reference result into {@code out} (any dtype; one rounding per element). */
    public static void run(Tensor x, Tensor w, Tensor bias, Tensor residual, Tensor out, int stride, Layout layout,
                           Activation act) {
        double[] v = compute(x, w, bias, residual, stride, layout, act);
        for (int i = 0; i < v.length; i++) {
            out.setDouble(i, v[i]);
        }
    }

    /**
     * The result before the final rounding, one value per output element in the output's row-major
     * order: an fp32 value (as double) for NONE/RELU/RELU6, the fp64 activation of the fp32
     * pre-activation otherwise. Rounding it once to the output dtype gives the reference's bits.
     */
    public static double[] compute(Tensor x, Tensor w, Tensor bias, Tensor residual, int stride, Layout layout, Activation act) {
        float[] pre = preActivation(x, w, bias, residual, stride, layout);
        double[] out = new double[pre.length];
        IntStream.range(0, pre.length).parallel().forEach(i -> out[i] = activate(pre[i], act));
        return out;
    }

    /** Step 1-2: the fp32 pre-activation of every output element, output row-major order. */
    public static float[] preActivation(Tensor x, Tensor w, Tensor bias, Tensor residual, int stride, Layout layout) {
        Geometry g = new Geometry(x.shape(), stride, layout);
        float[] xf = floats(x);
        float[] wf = floats(w);
        float[] bf = bias == null ? null : floats(bias);
        float[] rf = residual == null ? null : floats(residual);
        float[] y = new float[(int) g.outElements()];
        // one task per (image, channel): each writes only its own outputs, in the same fixed tap order as a sequential loop
        IntStream.range(0, g.n * g.c).parallel().forEach(nc -> {
            int n = nc / g.c;
            int c = nc % g.c;
            for (int i = 0; i < g.ho; i++) {
                for (int j = 0; j < g.wo; j++) {
                    float acc = 0f;
                    for (int p = 0; p < 3; p++) {
                        for (int q = 0; q < 3; q++) {
                            int r = stride * i + p - 1;
                            int col = stride * j + q - 1;
                            float xv = r < 0 || r >= g.h || col < 0 || col >= g.w ? 0f : xf[g.in(n, c, r, col)];
                            acc = Math.fma(wf[c * 9 + p * 3 + q], xv, acc);
                        }
                    }
                    int o = g.out(n, c, i, j);
                    float v = acc;
                    if (bf != null) {
                        v = v + bf[c];
                    }
                    if (rf != null) {
                        v = v + rf[o];
                    }
                    y[o] = v;
                }
            }
        });
        return y;
    }

    /**
     * Per output element, Σ_taps |w·x| + |bias| + |res| (in fp64): the magnitude that scales an
     * accumulation tolerance for paths whose summation order is not defined (the vendor's).
     */
    public static double[] magnitudes(Tensor x, Tensor w, Tensor bias, Tensor residual, int stride, Layout layout) {
        Geometry g = new Geometry(x.shape(), stride, layout);
        float[] xf = floats(x);
        float[] wf = floats(w);
        float[] bf = bias == null ? null : floats(bias);
        float[] rf = residual == null ? null : floats(residual);
        double[] m = new double[(int) g.outElements()];
        IntStream.range(0, g.n * g.c).parallel().forEach(nc -> {
            int n = nc / g.c;
            int c = nc % g.c;
            for (int i = 0; i < g.ho; i++) {
                for (int j = 0; j < g.wo; j++) {
                    double s = 0;
                    for (int p = 0; p < 3; p++) {
                        for (int q = 0; q < 3; q++) {
                            int r = stride * i + p - 1;
                            int col = stride * j + q - 1;
                            if (r >= 0 && r < g.h && col >= 0 && col < g.w) {
                                s += Math.abs((double) wf[c * 9 + p * 3 + q] * xf[g.in(n, c, r, col)]);
                            }
                        }
                    }
                    int o = g.out(n, c, i, j);
                    if (bf != null) {
                        s += Math.abs(bf[c]);
                    }
                    if (rf != null) {
                        s += Math.abs(rf[o]);
                    }
                    m[o] = s;
                }
            }
        });
        return m;
    }

    /** Step 3: the activation of an fp32 pre-activation, exact for NONE/RELU/RELU6, in fp64 otherwise. */
    public static double activate(float v, Activation act) {
        switch (act) {
            case NONE: return v;
            case RELU: return v < 0f ? 0f : v;
            case RELU6: return v < 0f ? 0f : (v > 6f ? 6f : v);
            case SILU: return v / (1.0 + Math.exp(-(double) v));
            case GELU_ERF: return 0.5 * v * erfc(-(double) v * SQRT1_2);
            case GELU_TANH: {
                double d = v;
                double t = SQRT_2_OVER_PI * Math.fma(0.044715 * d, d * d, d);
                return d / (1.0 + Math.exp(-2.0 * t));
            }
            default: throw new IllegalArgumentException(String.valueOf(act));
        }
    }

    /**
     * The complementary error function in fp64 (Java has none): for |z| < 2.5 through the positive
     * series erf(z) = (2/√π)·e^(−z²)·Σ_k (2z²)^k·z / (1·3·…·(2k+1)) (no cancellation, relative error a few
     * ulp of fp64, so erfc = 1 − erf loses at most ~4 decimal digits at z = 2.5); for z ≥ 2.5 through
     * the continued fraction erfc(z) = e^(−z²)/√π · 1/(z + (1/2)/(z + 1/(z + (3/2)/(z + …)))), evaluated
     * bottom-up from depth 160; erfc(−z) = 2 − erfc(z). Accurate to ~1e-12 relative, far below the fp32
     * ulp it is rounded to.
     */
    public static double erfc(double z) {
        if (Double.isNaN(z)) {
            return Double.NaN;
        }
        if (z < 0) {
            return 2.0 - erfc(-z);
        }
        if (z < 2.5) {
            return 1.0 - erfSeries(z);
        }
        if (z > 27.3) { // e^(-z²) underflows fp64
            return 0.0;
        }
        double k = z;
        for (int n = 160; n >= 1; n--) {
            k = z + (n * 0.5) / k;
        }
        return Math.exp(-z * z) * INV_SQRT_PI / k;
    }

    /** erf(z) for 0 ≤ z < 2.5 by the positive-term series. */
    static double erfSeries(double z) {
        double z2 = z * z;
        double term = z;     // (2z²)^k·z / (1·3·…·(2k+1)) for k = 0
        double sum = term;
        for (int k = 1; k < 200; k++) {
            term *= 2.0 * z2 / (2 * k + 1);
            sum += term;
            if (term < sum * 1e-17) {
                break;
            }
        }
        return 2.0 * INV_SQRT_PI * Math.exp(-z2) * sum;
    }

    private static float[] floats(Tensor t) {
        double[] d = t.toDoubleArray();  // F32/F16/BF16 values: the narrowing back to float is exact
        float[] f = new float[d.length];
        for (int i = 0; i < f.length; i++) {
            f[i] = (float) d[i];
        }
        return f;
    }

    /** Index arithmetic of both layouts. */
    private static final class Geometry {
        final int n, c, h, w, ho, wo;
        final boolean nchw;

        Geometry(long[] xs, int stride, Layout layout) {
            nchw = layout == Layout.NCHW;
            n = (int) xs[0];
            c = (int) (nchw ? xs[1] : xs[3]);
            h = (int) (nchw ? xs[2] : xs[1]);
            w = (int) (nchw ? xs[3] : xs[2]);
            ho = (h + stride - 1) / stride;
            wo = (w + stride - 1) / stride;
        }

        long outElements() { return (long) n * c * ho * wo; }

        int in(int ni, int ci, int r, int col) {
            return nchw ? ((ni * c + ci) * h + r) * w + col : ((ni * h + r) * w + col) * c + ci;
        }

        int out(int ni, int ci, int i, int j) {
            return nchw ? ((ni * c + ci) * ho + i) * wo + j : ((ni * ho + i) * wo + j) * c + ci;
        }
    }
}
