package dev.gapfill.ops.reference;

import dev.gapfill.core.DType;
import dev.gapfill.core.Tensor;

/**
 * CPU reference of {@link dev.gapfill.ops.Int8Mm}: exact integer accumulation in {@code long}, then the
 * dequantization in fp64 with the same three IEEE operations the GPU epilogue performs, and one rounding
 * to the output dtype:
 * <pre>
 *   acc = Σ_k A[m,k]·W[n,k]                      exact
 *   s   = (double) aScale[m] · (double) wScale[n]  exact (two 24-bit significands fit in 53 bits)
 *   v   = acc · s                                 one fp64 rounding
 *   v   = v + (double) bias[n]                    one fp64 rounding (only with a bias)
 *   out = v rounded once to F32 / F16 / BF16
 * </pre>
 * The GPU kernels compute the same expression in the same order without contraction
 * ({@code cuda-native/src/main/cuda/common/int8_mm.cuh}), so their outputs equal this reference bit for bit.
 */
public final class Int8MmReference {
    private Int8MmReference() {}

    /** Exact {@code acc[m*n + j] = Σ_k a[m,k]·w[j,k]}; a: [M, K] I8, w: [N, K] I8 (CPU tensors, any strides). */
    public static long[] accumulate(Tensor a, Tensor w) {
        int m = (int) a.dim(0);
        int k = (int) a.dim(1);
        int n = (int) w.dim(0);
        byte[] av = bytes(a);
        byte[] wv = bytes(w);
        long[] acc = new long[m * n];
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                long s = 0;
                int ao = i * k;
                int wo = j * k;
                for (int q = 0; q < k; q++) {
                    s += av[ao + q] * wv[wo + q];
                }
                acc[i * n + j] = s;
            }
        }
        return acc;
    }

    /**
     * The dequantized value of one element before the final rounding, exactly as the GPU computes it.
     *
     * @param bias null for no bias
     */
    public static double dequantize(long acc, float aScale, float wScale, Float bias) {
        double s = (double) aScale * (double) wScale;
        double v = (double) acc * s;
        return bias == null ? v : v + (double) bias;
    }

    /**
     * Runs the op on CPU tensors: out = acc (I32) or dequantize(acc, …) rounded once to out's dtype.
     *
     * @param aScale [M] or [1] F32, null for I32 output
     * @param wScale [N] or [1] F32, null for I32 output
     * @param bias   [N] F32 or null
     */
    public static void run(Tensor a, Tensor w, Tensor aScale, Tensor wScale, Tensor bias, Tensor out) {
        double[] r = expected(a, w, aScale, wScale, bias, out.dtype());
        for (int i = 0; i < r.length; i++) {
            out.setDouble(i, r[i]);
        }
    }

    /** The fp64 values the GPU must round (for {@link dev.gapfill.core.DType#I32}: the exact sums). */
    public static double[] expected(Tensor a, Tensor w, Tensor aScale, Tensor wScale, Tensor bias, DType out) {
        return expected(accumulate(a, w), (int) a.dim(0), (int) w.dim(0), aScale, wScale, bias, out);
    }

    /** {@link #expected(Tensor, Tensor, Tensor, Tensor, Tensor, DType)} from sums already computed by {@link #accumulate}. */
    public static double[] expected(long[] acc, int m, int n, Tensor aScale, Tensor wScale, Tensor bias, DType out) {
        double[] r = new double[acc.length];
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                long v = acc[i * n + j];
                if (out == DType.I32) {
                    r[i * n + j] = v;
                } else {
                    float as = (float) aScale.getDouble(aScale.numel() == 1 ? 0 : i);
                    float ws = (float) wScale.getDouble(wScale.numel() == 1 ? 0 : j);
                    r[i * n + j] = dequantize(v, as, ws, bias == null ? null : (float) bias.getDouble(j));
                }
            }
        }
        return r;
    }

    private static byte[] bytes(Tensor t) {
        if (t.isContiguous()) {
            return t.toByteArray();
        }
        byte[] b = new byte[(int) t.numel()];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) t.getDouble(i);
        }
        return b;
    }
}
