package dev.gapfill.examples.bench;

import dev.gapfill.core.DType;
import dev.gapfill.core.HalfFloats;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The int8 sweep's sampled check of float outputs: it passes what the kernels compute and fails what they could get wrong. */
class Int8MmBenchTest {
    private static final int M = 5, N = 7, K = 96;

    /** What a dequantizing path computes: the int32 sum, scaled and biased in fp32, rounded once to {@code out}. */
    private static double[] computed(DType out, byte[] a, byte[] w, double[] as, double[] ws, double[] bias) {
        double[] o = new double[M * N];
        for (int i = 0; i < M; i++) {
            for (int j = 0; j < N; j++) {
                int sum = 0;
                for (int q = 0; q < K; q++) {
                    sum += a[i * K + q] * w[j * K + q];
                }
                float f = (float) sum * (float) as[as.length == 1 ? 0 : i] * (float) ws[ws.length == 1 ? 0 : j]
                        + (bias == null ? 0f : (float) bias[j]);
                o[i * N + j] = out == DType.F16 ? HalfFloats.halfToFloat(HalfFloats.floatToHalf(f))
                        : out == DType.BF16 ? HalfFloats.bf16ToFloat(HalfFloats.floatToBf16(f)) : f;
            }
        }
        return o;
    }

    @Test void theSampledCheckPassesTheKernelsArithmeticAndFailsAWrongElementScaleOrPoison() {
        Random r = new Random(7);
        byte[] a = new byte[M * K];
        byte[] w = new byte[N * K];
        r.nextBytes(a);
        r.nextBytes(w);
        double[] as = new double[M];
        double[] ws = new double[N];
        double[] bias = new double[N];
        for (int i = 0; i < M; i++) {
            as[i] = (float) (1e-3 + 5e-2 * r.nextDouble());
        }
        for (int j = 0; j < N; j++) {
            ws[j] = (float) (1e-3 + 5e-2 * r.nextDouble());
            bias[j] = (float) (1e-3 + 5e-2 * r.nextDouble());
        }
        for (DType out : new DType[] {DType.F16, DType.BF16, DType.F32}) {
            double[] good = computed(out, a, w, as, ws, bias);
            assertTrue(Int8MmBench.sampledDequantMatch(good, out, a, w, as, ws, bias, M, N, K), out.name());
            assertTrue(Int8MmBench.noNaN(good));
            double[] noBias = computed(out, a, w, as, ws, null);
            assertFalse(Int8MmBench.sampledDequantMatch(noBias, out, a, w, as, ws, bias, M, N, K), out + " without the bias");
            double[] shifted = new double[M * N];  // every element read from the next column
            for (int i = 0; i < M; i++) {
                for (int j = 0; j < N; j++) {
                    shifted[i * N + j] = good[i * N + (j + 1) % N];
                }
            }
            assertFalse(Int8MmBench.sampledDequantMatch(shifted, out, a, w, as, ws, bias, M, N, K), out + " columns shifted");
            double[] swapped = computed(out, a, w, as, ws, bias);
            double[] otherScale = ws.clone();
            otherScale[3] *= 1.01;  // one column scaled 1 % off: beyond even BF16's bound
            assertFalse(Int8MmBench.sampledDequantMatch(swapped, out, a, w, as, otherScale, bias, M, N, K), out + " scale");
            double[] poisoned = good.clone();
            poisoned[M * N - 1] = Double.NaN;
            assertFalse(Int8MmBench.noNaN(poisoned), "NaN poison left in the output");
        }
        // scalar scales (one element for every row or column), and a result in F16's subnormal range
        double[] one = {as[0]};
        double[] oneW = {ws[0]};
        for (DType out : new DType[] {DType.F16, DType.BF16, DType.F32}) {
            assertTrue(Int8MmBench.sampledDequantMatch(computed(out, a, w, one, oneW, bias), out, a, w, one, oneW, bias, M, N, K), out + " scalar");
        }
        double[] tiny = {1e-9};
        assertTrue(Int8MmBench.sampledDequantMatch(computed(DType.F16, a, w, tiny, oneW, null), DType.F16, a, w, tiny, oneW, null, M, N, K),
                "F16 results below its normal range, rounded absolutely");
        // beyond F16's range: the infinity of the exact value's sign, not a finite number
        double[] bigA = new double[M];
        double[] big = new double[N];
        java.util.Arrays.fill(bigA, 1e3);
        java.util.Arrays.fill(big, 1e3);
        double[] f16 = computed(DType.F16, a, w, bigA, big, null);
        assertTrue(java.util.Arrays.stream(f16).anyMatch(Double::isInfinite), "the case overflows F16 somewhere");
        assertTrue(Int8MmBench.sampledDequantMatch(f16, DType.F16, a, w, bigA, big, null, M, N, K));
        double[] clipped = f16.clone();
        for (int e = 0; e < clipped.length; e++) {
            if (Double.isInfinite(clipped[e])) {
                clipped[e] = Math.copySign(65504.0, clipped[e]);
            }
        }
        assertFalse(Int8MmBench.sampledDequantMatch(clipped, DType.F16, a, w, bigA, big, null, M, N, K), "saturated instead of infinite");
    }
}
