package dev.gapfill.ops.reference;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.ops.DepthwiseConv3x3.Activation;
import dev.gapfill.ops.DepthwiseConv3x3.Layout;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The reference's definition: its arithmetic, its independence from layout and stride, its erfc. */
class DepthwiseConv3x3ReferenceProperties {
    private static final DType[] DTS = {DType.F32, DType.F16, DType.BF16};

    @Test void erfcMatchesKnownValues() {
        // values from Abramowitz & Stegun / high-precision tables
        assertEquals(1.0, DepthwiseConv3x3Reference.erfc(0), 0);
        assertEquals(1 - 0.5204998778130465, DepthwiseConv3x3Reference.erfc(0.5), 1e-15);
        assertEquals(1 - 0.8427007929497149, DepthwiseConv3x3Reference.erfc(1), 1e-15);
        assertEquals(2.209049699858544e-05, DepthwiseConv3x3Reference.erfc(3), 2.209049699858544e-05 * 1e-12);
        assertEquals(1.5374597944280349e-12, DepthwiseConv3x3Reference.erfc(5), 1.5374597944280349e-12 * 1e-12);
        assertEquals(1 + 0.8427007929497149, DepthwiseConv3x3Reference.erfc(-1), 1e-15);
        assertEquals(0.0, DepthwiseConv3x3Reference.erfc(30), 0);
        assertEquals(2.0, DepthwiseConv3x3Reference.erfc(-30), 0);
    }

    @Property(tries = 200)
    void erfcSeriesAndContinuedFractionAgreeNearTheSwitch(@ForAll @IntRange(min = 0, max = 1000) int k) {
        double z = 2.5 + 0.5 * k / 1000.0; // both evaluations are valid in [2.5, 3]; erfc uses the fraction here
        double series = 1 - DepthwiseConv3x3Reference.erfSeries(z);
        double cf = DepthwiseConv3x3Reference.erfc(z);
        assertEquals(series, cf, Math.abs(cf) * 1e-9, "z=" + z);
    }

    @Test void activationsAtKnownPoints() {
        assertEquals(0.7310585786300049, DepthwiseConv3x3Reference.activate(1f, Activation.SILU), 1e-16);
        assertEquals(0.8413447460685429, DepthwiseConv3x3Reference.activate(1f, Activation.GELU_ERF), 1e-15);
        assertEquals(0.8411919906082768, DepthwiseConv3x3Reference.activate(1f, Activation.GELU_TANH), 1e-15);
        assertEquals(-0.15865525393145707, DepthwiseConv3x3Reference.activate(-1f, Activation.GELU_ERF), 1e-15);
        // deep negative tail stays non-zero (no 1 + erf cancellation): ½·v·erfc(10/√2) ≈ −7.6e−23
        double g = DepthwiseConv3x3Reference.activate(-10f, Activation.GELU_ERF);
        assertTrue(g < 0 && g > -1e-22 && g < -1e-23, "gelu(-10) = " + g);
        assertEquals(6.0, DepthwiseConv3x3Reference.activate(7.5f, Activation.RELU6), 0);
        assertEquals(0.0, DepthwiseConv3x3Reference.activate(-2f, Activation.RELU6), 0);
        assertEquals(-0.0, DepthwiseConv3x3Reference.activate(-0f, Activation.RELU), 0);
        assertTrue(Double.isNaN(DepthwiseConv3x3Reference.activate(Float.NaN, Activation.RELU)));
    }

    @Test void singlePixelIsCentreTapPlusBias() {
        try (Tensor x = Tensor.of(Device.CPU, DType.F32, new float[] {3f, -2f}, 1, 2, 1, 1);
             Tensor w = Tensor.of(Device.CPU, DType.F32, new float[] {9, 9, 9, 9, 0.5f, 9, 9, 9, 9, 1, 1, 1, 1, 2, 1, 1, 1, 1}, 2, 3, 3);
             Tensor b = Tensor.of(Device.CPU, DType.F32, new float[] {0.25f, -1f}, 2)) {
            double[] y = DepthwiseConv3x3Reference.compute(x, w, b, null, 1, Layout.NCHW, Activation.NONE);
            assertEquals(1.75, y[0], 0);
            assertEquals(-5.0, y[1], 0);
        }
    }

    @Test void tapsAccumulateAsSequentialFp32FmasInPMajorOrder() {
        // one 3x3 image, one output at the centre: values chosen so the order changes the fp32 result
        float[] xv = {1e8f, 1f, -1e8f, 3f, 1f, 1f, 0.5f, 1f, 1f};
        float[] wv = {1f, 1f, 1f, 1f, 1f, 1f, 1f, 1f, 1f};
        try (Tensor x = Tensor.of(Device.CPU, DType.F32, xv, 1, 1, 3, 3); Tensor w = Tensor.of(Device.CPU, DType.F32, wv, 1, 3, 3)) {
            double centre = DepthwiseConv3x3Reference.compute(x, w, null, null, 1, Layout.NCHW, Activation.NONE)[4];
            float acc = 0f;
            for (int t = 0; t < 9; t++) {
                acc = Math.fma(wv[t], xv[t], acc);
            }
            assertEquals(acc, (float) centre, 0);
            double exact = 0;
            for (int t = 0; t < 9; t++) {
                exact += xv[t];
            }
            assertTrue(acc != (float) exact, "the chosen data must expose the order (fp32 " + acc + ", exact " + exact + ")");
        }
    }

    @Property(tries = 60)
    void withinTheFp32AccumulationBoundOfTheExactSum(@ForAll @IntRange(min = 1, max = 3) int n, @ForAll @IntRange(min = 1, max = 9) int c,
                                                    @ForAll @IntRange(min = 1, max = 12) int h, @ForAll @IntRange(min = 1, max = 12) int wd,
                                                    @ForAll @IntRange(min = 1, max = 2) int stride, @ForAll long seed) {
        Random rnd = new Random(seed);
        try (Tensor x = Poison.random(Device.CPU, DType.F32, rnd, n, c, h, wd); Tensor w = Poison.random(Device.CPU, DType.F32, rnd, c, 3, 3);
             Tensor b = Poison.random(Device.CPU, DType.F32, rnd, c)) {
            double[] y = DepthwiseConv3x3Reference.compute(x, w, b, null, stride, Layout.NCHW, Activation.NONE);
            double[] mag = DepthwiseConv3x3Reference.magnitudes(x, w, b, null, stride, Layout.NCHW);
            int ho = (h + stride - 1) / stride;
            int wo = (wd + stride - 1) / stride;
            assertEquals((long) n * c * ho * wo, y.length);
            for (int ni = 0; ni < n; ni++) {
                for (int ci = 0; ci < c; ci++) {
                    for (int i = 0; i < ho; i++) {
                        for (int j = 0; j < wo; j++) {
                            double exact = b.getDouble(ci);
                            for (int p = 0; p < 3; p++) {
                                for (int q = 0; q < 3; q++) {
                                    int r = stride * i + p - 1;
                                    int col = stride * j + q - 1;
                                    if (r >= 0 && r < h && col >= 0 && col < wd) {
                                        exact += w.getDouble(ci * 9 + p * 3 + q) * x.getDouble(((long) (ni * c + ci) * h + r) * wd + col);
                                    }
                                }
                            }
                            int o = ((ni * c + ci) * ho + i) * wo + j;
                            double bound = 10 * 0x1p-24 / (1 - 10 * 0x1p-24) * mag[o];
                            assertTrue(Math.abs(y[o] - exact) <= bound, "element " + o + ": " + y[o] + " vs exact " + exact);
                        }
                    }
                }
            }
        }
    }

    @Property(tries = 40)
    void nhwcIsNchwTransposedBitForBit(@ForAll @IntRange(min = 1, max = 2) int n, @ForAll @IntRange(min = 1, max = 13) int c,
                                       @ForAll @IntRange(min = 1, max = 9) int h, @ForAll @IntRange(min = 1, max = 9) int wd,
                                       @ForAll @IntRange(min = 1, max = 2) int stride, @ForAll @IntRange(min = 0, max = 2) int dti,
                                       @ForAll @IntRange(min = 0, max = 5) int acti, @ForAll long seed) {
        DType dt = DTS[dti];
        Activation act = Activation.values()[acti];
        Random rnd = new Random(seed);
        int ho = (h + stride - 1) / stride;
        int wo = (wd + stride - 1) / stride;
        try (Tensor x = Poison.random(Device.CPU, dt, rnd, n, c, h, wd); Tensor w = Poison.random(Device.CPU, dt, rnd, c, 3, 3);
             Tensor b = Poison.random(Device.CPU, dt, rnd, c); Tensor r = Poison.random(Device.CPU, dt, rnd, n, c, ho, wo);
             Tensor xt = transpose(x, n, c, h, wd); Tensor rt = transpose(r, n, c, ho, wo);
             Tensor y = Tensor.empty(Device.CPU, dt, n, c, ho, wo); Tensor yt = Tensor.empty(Device.CPU, dt, n, ho, wo, c)) {
            DepthwiseConv3x3Reference.run(x, w, b, r, y, stride, Layout.NCHW, act);
            DepthwiseConv3x3Reference.run(xt, w, b, rt, yt, stride, Layout.NHWC, act);
            for (int ni = 0; ni < n; ni++) {
                for (int ci = 0; ci < c; ci++) {
                    for (int i = 0; i < ho; i++) {
                        for (int j = 0; j < wo; j++) {
                            assertEquals(y.getRawBits(((long) (ni * c + ci) * ho + i) * wo + j),
                                    yt.getRawBits(((long) (ni * ho + i) * wo + j) * c + ci));
                        }
                    }
                }
            }
        }
    }

    @Property(tries = 40)
    void strideTwoIsStrideOneSubsampledBitForBit(@ForAll @IntRange(min = 1, max = 5) int c, @ForAll @IntRange(min = 1, max = 17) int h,
                                                 @ForAll @IntRange(min = 1, max = 17) int wd, @ForAll @IntRange(min = 0, max = 2) int dti,
                                                 @ForAll long seed) {
        DType dt = DTS[dti];
        Random rnd = new Random(seed);
        try (Tensor x = Poison.random(Device.CPU, dt, rnd, 1, c, h, wd); Tensor w = Poison.random(Device.CPU, dt, rnd, c, 3, 3)) {
            double[] y1 = DepthwiseConv3x3Reference.compute(x, w, null, null, 1, Layout.NCHW, Activation.SILU);
            double[] y2 = DepthwiseConv3x3Reference.compute(x, w, null, null, 2, Layout.NCHW, Activation.SILU);
            int ho = (h + 1) / 2;
            int wo = (wd + 1) / 2;
            for (int ci = 0; ci < c; ci++) {
                for (int i = 0; i < ho; i++) {
                    for (int j = 0; j < wo; j++) {
                        assertEquals(y1[(ci * h + 2 * i) * wd + 2 * j], y2[(ci * ho + i) * wo + j], 0);
                    }
                }
            }
        }
    }

    /** [n,c,h,w] → [n,h,w,c] on the host. */
    static Tensor transpose(Tensor t, int n, int c, int h, int w) {
        Tensor o = Tensor.empty(Device.CPU, t.dtype(), n, h, w, c);
        for (int ni = 0; ni < n; ni++) {
            for (int ci = 0; ci < c; ci++) {
                for (int i = 0; i < h; i++) {
                    for (int j = 0; j < w; j++) {
                        o.setRawBits(((long) (ni * h + i) * w + j) * c + ci, t.getRawBits(((long) (ni * c + ci) * h + i) * w + j));
                    }
                }
            }
        }
        return o;
    }
}
