package dev.gapfill.verify;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.DepthwiseConv3x3;
import dev.gapfill.ops.reference.GqaDecodeReference;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Per-op checks that must not pass a wrong result (CPU tensors; runs everywhere). */
class PerOpChecksWrongPassesTest {
    /**
     * After an in-place depthwise call the residual is the result: a reference built from it agrees with whatever the
     * kernel wrote (all NaN, or values so large that the convolution rounds away). The check refuses that residual.
     */
    @Test void aDepthwiseResidualSharingTheResultsMemoryIsRefused() {
        float[] xs = new float[2 * 3 * 3];
        Arrays.fill(xs, 0.5f);
        float[] ws = new float[2 * 9];
        Arrays.fill(ws, 0.25f);
        float[] nan = new float[2 * 3 * 3];
        Arrays.fill(nan, Float.NaN);
        DepthwiseConv3x3.Options o = DepthwiseConv3x3.Options.defaults();
        try (Tensor x = Tensor.of(Device.CPU, DType.F32, xs, 1, 2, 3, 3); Tensor w = Tensor.of(Device.CPU, DType.F32, ws, 2, 3, 3);
             Tensor y = Tensor.of(Device.CPU, DType.F32, nan, 1, 2, 3, 3)) {
            ArgumentException e = assertThrows(ArgumentException.class, () -> DepthwiseConv3x3Verification.checkCustom(y, x, w, null, y, o));
            assertEquals("residual", e.argument());
            Tensor view = y.strided(y.shape(), Tensor.contiguousStrides(y.shape()), 0);  // another tensor over y's buffer
            assertEquals("residual", assertThrows(ArgumentException.class,
                    () -> DepthwiseConv3x3Verification.checkCustom(y, x, w, null, view, o)).argument());
            try (Tensor copy = Tensor.of(Device.CPU, DType.F32, new float[18], 1, 2, 3, 3)) {  // a residual of its own: compared
                assertFalse(DepthwiseConv3x3Verification.checkCustom(y, x, w, null, copy, o).pass(), "NaN results fail");
            }
            // arguments named before the reference runs
            assertEquals("o", assertThrows(ArgumentException.class, () -> DepthwiseConv3x3Verification.checkCustom(y, x, w, null, null, null)).argument());
            assertEquals("tol", assertThrows(ArgumentException.class,
                    () -> DepthwiseConv3x3Verification.check(y, x, w, null, null, o, null, "reference")).argument());
            assertEquals("x", assertThrows(ArgumentException.class,
                    () -> DepthwiseConv3x3Verification.checkCustom(y, w, w, null, null, o)).argument());  // rank 3
            // short or mis-shaped operands are named, not left to fail inside the reference
            try (Tensor shortW = Tensor.of(Device.CPU, DType.F32, new float[9], 1, 3, 3);
                 Tensor shortBias = Tensor.of(Device.CPU, DType.F32, new float[1], 1);
                 Tensor bias = Tensor.of(Device.CPU, DType.F32, new float[] {0.5f, -0.5f}, 2);
                 Tensor wrongY = Tensor.of(Device.CPU, DType.F32, new float[8], 1, 2, 2, 2);
                 Tensor f16Bias = Tensor.of(Device.CPU, DType.F16, new float[] {0.5f, -0.5f}, 2);
                 Tensor shortRes = Tensor.of(Device.CPU, DType.F32, new float[9], 1, 1, 3, 3)) {
                assertEquals("w", assertThrows(ArgumentException.class,
                        () -> DepthwiseConv3x3Verification.checkCustom(y, x, shortW, null, null, o)).argument());
                assertEquals("bias", assertThrows(ArgumentException.class,
                        () -> DepthwiseConv3x3Verification.checkCustom(y, x, w, shortBias, null, o)).argument());
                assertEquals("bias", assertThrows(ArgumentException.class,
                        () -> DepthwiseConv3x3Verification.checkCustom(y, x, w, f16Bias, null, o)).argument());
                assertEquals("residual", assertThrows(ArgumentException.class,
                        () -> DepthwiseConv3x3Verification.checkCustom(y, x, w, bias, shortRes, o)).argument());
                assertEquals("y", assertThrows(ArgumentException.class,
                        () -> DepthwiseConv3x3Verification.checkCustom(wrongY, x, w, bias, null, o)).argument());
                assertFalse(DepthwiseConv3x3Verification.checkCustom(y, x, w, bias, null, o).pass(), "NaN results fail");
            }
            // the op's dtypes only, w's dtype that of x, and the other layout, stride and w's rank-4 form checked alike
            try (Tensor ix = Tensor.ofInts(Device.CPU, new int[18], 1, 2, 3, 3);
                 Tensor iw = Tensor.ofInts(Device.CPU, new int[18], 2, 3, 3);
                 Tensor iy = Tensor.ofInts(Device.CPU, new int[18], 1, 2, 3, 3);
                 Tensor f16W = Tensor.of(Device.CPU, DType.F16, ws, 2, 3, 3);
                 Tensor w4 = Tensor.of(Device.CPU, DType.F32, ws, 2, 1, 3, 3);
                 Tensor nhwcX = Tensor.of(Device.CPU, DType.F32, xs, 1, 3, 3, 2);
                 Tensor s2Y = Tensor.of(Device.CPU, DType.F32, new float[8], 1, 2, 2, 2)) {
                assertEquals("x", assertThrows(ArgumentException.class,
                        () -> DepthwiseConv3x3Verification.checkCustom(iy, ix, iw, null, null, o)).argument());
                assertEquals("w", assertThrows(ArgumentException.class,
                        () -> DepthwiseConv3x3Verification.checkCustom(y, x, f16W, null, null, o)).argument());
                assertFalse(DepthwiseConv3x3Verification.checkCustom(y, x, w4, null, null, o).pass(), "rank-4 w accepted; NaN fails");
                DepthwiseConv3x3.Options nhwc = DepthwiseConv3x3.Options.builder().layout(DepthwiseConv3x3.Layout.NHWC).build();
                assertEquals("y", assertThrows(ArgumentException.class,   // y is [1, 2, 3, 3]: NHWC wants [1, 3, 3, 2]
                        () -> DepthwiseConv3x3Verification.checkCustom(y, nhwcX, w, null, null, nhwc)).argument());
                DepthwiseConv3x3.Options s2 = DepthwiseConv3x3.Options.builder().stride(2).build();
                assertEquals("y", assertThrows(ArgumentException.class,   // stride 2 on 3x3: y is [1, 2, 2, 2]
                        () -> DepthwiseConv3x3Verification.checkCustom(y, x, w, null, null, s2)).argument());
                assertFalse(DepthwiseConv3x3Verification.checkCustom(s2Y, x, w, null, null, s2).pass(), "shaped right, so compared; zeros fail");
            }
        }
    }

    /**
     * A score term of −∞ gives its key probability 0, so the lse stays finite while sigma (Σ|q·k|·scale) is infinite:
     * the bound would be infinite and pass any lse. Only the reference's bits pass there.
     */
    @Test void anInfiniteSigmaDoesNotMakeTheLseBoundVacuous() {
        GqaDecodeReference.Exact ref = new GqaDecodeReference.Exact(new double[64], new double[64], new double[] {1.5},
                new double[] {Double.POSITIVE_INFINITY}, new int[] {2});
        try (Tensor wrong = Tensor.of(Device.CPU, DType.F32, new float[] {12345f}, 1, 1);
             Tensor right = Tensor.of(Device.CPU, DType.F32, new float[] {1.5f}, 1, 1)) {
            assertFalse(AttentionTolerance.compareLse(wrong, ref, 64).pass());
            assertTrue(AttentionTolerance.compareLse(right, ref, 64).pass());
        }
        GqaDecodeReference.Exact noSequences = new GqaDecodeReference.Exact(new double[64], new double[64], new double[] {1.5},
                new double[] {3.0}, new int[0]);
        try (Tensor one = Tensor.of(Device.CPU, DType.F32, new float[] {1.5f}, 1, 1)) {
            assertEquals("ref", assertThrows(ArgumentException.class, () -> AttentionTolerance.compareLse(one, noSequences, 64)).argument());
        }
        // with a finite sigma the bound applies as before
        GqaDecodeReference.Exact finite = new GqaDecodeReference.Exact(new double[64], new double[64], new double[] {1.5},
                new double[] {3.0}, new int[] {2});
        try (Tensor close = Tensor.of(Device.CPU, DType.F32, new float[] {Math.nextUp(1.5f)}, 1, 1)) {
            assertTrue(AttentionTolerance.compareLse(close, finite, 64).pass());
            // the arguments are named: a head dimension below 1, a null reference or lse, an lse that is not F32
            assertEquals("headDim", assertThrows(ArgumentException.class, () -> AttentionTolerance.compareLse(close, finite, 0)).argument());
            assertEquals("headDim", assertThrows(ArgumentException.class, () -> AttentionTolerance.compareLse(close, finite, -64)).argument());
            assertEquals("ref", assertThrows(ArgumentException.class, () -> AttentionTolerance.compareLse(close, null, 64)).argument());
            assertEquals("lse", assertThrows(ArgumentException.class, () -> AttentionTolerance.compareLse(null, finite, 64)).argument());
        }
        try (Tensor half = Tensor.of(Device.CPU, DType.F16, new float[] {1.5f}, 1, 1)) {
            assertEquals("lse", assertThrows(ArgumentException.class, () -> AttentionTolerance.compareLse(half, finite, 64)).argument());
        }
        // a non-finite mismatch reports an infinite relative error, as Verdict does elsewhere
        try (Tensor inf = Tensor.of(Device.CPU, DType.F32, new float[] {Float.POSITIVE_INFINITY}, 1, 1)) {
            Verdict v = AttentionTolerance.compareLse(inf, finite, 64);
            assertFalse(v.pass());
            assertEquals(Double.POSITIVE_INFINITY, v.maxRelErr());
        }
    }
}
