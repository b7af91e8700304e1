package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.ops.DepthwiseConv3x3.Activation;
import dev.gapfill.ops.DepthwiseConv3x3.Layout;
import dev.gapfill.ops.DepthwiseConv3x3.Options;
import dev.gapfill.ops.reference.DepthwiseConv3x3Reference;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Validation, options and the CPU backend of DepthwiseConv3x3 (runs everywhere). */
class DepthwiseConv3x3ValidationProperties {
    private static final DType[] DTS = {DType.F32, DType.F16, DType.BF16};

    @Property(tries = 40)
    void cpuBackendIsTheReference(@ForAll @IntRange(min = 1, max = 2) int n, @ForAll @IntRange(min = 1, max = 9) int c,
                                  @ForAll @IntRange(min = 1, max = 11) int h, @ForAll @IntRange(min = 1, max = 11) int w,
                                  @ForAll @IntRange(min = 1, max = 2) int stride, @ForAll @IntRange(min = 0, max = 2) int dti,
                                  @ForAll @IntRange(min = 0, max = 5) int acti, @ForAll @IntRange(min = 0, max = 1) int li,
                                  @ForAll boolean withBias, @ForAll boolean withRes, @ForAll long seed) {
        DType dt = DTS[dti];
        Layout layout = Layout.values()[li];
        Options o = Options.builder().stride(stride).layout(layout).activation(Activation.values()[acti]).build();
        Random rnd = new Random(seed);
        long[] xs = layout == Layout.NCHW ? new long[] {n, c, h, w} : new long[] {n, h, w, c};
        long[] ys = DepthwiseConv3x3.outputShape(xs, o);
        try (Tensor x = Poison.random(Device.CPU, dt, rnd, xs); Tensor wt = Poison.random(Device.CPU, dt, rnd, c, 3, 3);
             Tensor b = withBias ? Poison.random(Device.CPU, dt, rnd, c) : null;
             Tensor r = withRes ? Poison.random(Device.CPU, dt, rnd, ys) : null;
             Tensor y = DepthwiseConv3x3.apply(x, wt, b, r, o); Tensor ref = Tensor.empty(Device.CPU, dt, ys)) {
            assertArrayEquals(ys, y.shape());
            DepthwiseConv3x3Reference.run(x, wt, b, r, ref, stride, layout, o.activation());
            for (long i = 0; i < y.numel(); i++) {
                assertEquals(ref.getRawBits(i), y.getRawBits(i), "element " + i);
            }
            assertEquals(Backend.REFERENCE, DepthwiseConv3x3.decide(x, wt, b, r, y, o).backend());
        }
    }

    @Property(tries = 50)
    void outputIsCeilOfInputOverStride(@ForAll @IntRange(min = 1, max = 500) int h, @ForAll @IntRange(min = 1, max = 500) int w,
                                       @ForAll @IntRange(min = 1, max = 2) int s) {
        Options o = Options.builder().stride(s).layout(Layout.NHWC).build();
        assertArrayEquals(new long[] {2, (h + s - 1) / s, (w + s - 1) / s, 5}, DepthwiseConv3x3.outputShape(new long[] {2, h, w, 5}, o));
        DepthwiseConv3x3.Problem p = new DepthwiseConv3x3.Problem(DType.F16, Layout.NCHW, 1, 3, h, w, s, Activation.NONE, false, false);
        assertEquals((int) Math.ceil(h / (double) s), p.outH());
        assertEquals((int) Math.ceil(w / (double) s), p.outW());
    }

    @Property(tries = 30)
    void wrongShapesNameTheArgument(@ForAll @IntRange(min = 2, max = 20) int c, @ForAll @IntRange(min = 0, max = 4) int which) {
        Options o = Options.defaults();
        try (Tensor x = Tensor.empty(Device.CPU, DType.F16, 1, c, 5, 6);
             Tensor w = Tensor.empty(Device.CPU, DType.F16, which == 0 ? c - 1 : c, 3, which == 1 ? 2 : 3);
             Tensor b = Tensor.empty(Device.CPU, DType.F16, which == 2 ? c + 1 : c);
             Tensor r = Tensor.empty(Device.CPU, DType.F16, 1, c, which == 3 ? 4 : 5, 6);
             Tensor y = Tensor.empty(Device.CPU, DType.F16, 1, c, 5, which == 4 ? 3 : 6)) {
            String expected = new String[] {"w", "w", "bias", "residual", "out"}[which];
            ArgumentException e = assertThrows(ArgumentException.class, () -> DepthwiseConv3x3.apply(x, w, b, r, y, o, null));
            assertEquals(expected, e.argument(), e.getMessage());
        }
    }

    @Test void dtypesRankAndClosedTensorsAreRejected() {
        Options o = Options.defaults();
        try (Tensor x = Tensor.empty(Device.CPU, DType.F16, 1, 4, 5, 6); Tensor w32 = Tensor.empty(Device.CPU, DType.F32, 4, 3, 3);
             Tensor w = Tensor.empty(Device.CPU, DType.F16, 4, 3, 3); Tensor y = Tensor.empty(Device.CPU, DType.F16, 1, 4, 5, 6);
             Tensor xi = Tensor.empty(Device.CPU, DType.I32, 1, 4, 5, 6); Tensor x3 = Tensor.empty(Device.CPU, DType.F16, 4, 5, 6);
             Tensor y32 = Tensor.empty(Device.CPU, DType.F32, 1, 4, 5, 6)) {
            assertEquals("w", assertThrows(ArgumentException.class, () -> DepthwiseConv3x3.apply(x, w32, null, null, y, o, null)).argument());
            assertEquals("x", assertThrows(ArgumentException.class, () -> DepthwiseConv3x3.apply(xi, w, null, null, y, o, null)).argument());
            assertEquals("x", assertThrows(ArgumentException.class, () -> DepthwiseConv3x3.apply(x3, w, null, null, y, o, null)).argument());
            assertEquals("out", assertThrows(ArgumentException.class, () -> DepthwiseConv3x3.apply(x, w, null, null, y32, o, null)).argument());
            Tensor closed = Tensor.empty(Device.CPU, DType.F16, 4);
            closed.close();
            assertEquals("bias", assertThrows(ArgumentException.class, () -> DepthwiseConv3x3.apply(x, w, closed, null, y, o, null)).argument());
            assertEquals("options", assertThrows(ArgumentException.class, () -> DepthwiseConv3x3.apply(x, w, null, null, y, null, null)).argument());
        }
    }

    @Test void weightsMayCarryTheUnitGroupDimension() {
        Random rnd = new Random(3);
        try (Tensor x = Poison.random(Device.CPU, DType.F32, rnd, 1, 3, 4, 4); Tensor w4 = Poison.random(Device.CPU, DType.F32, rnd, 3, 1, 3, 3);
             Tensor w3 = w4.to(Device.CPU); Tensor y4 = DepthwiseConv3x3.apply(x, w4, null, Options.defaults())) {
            try (Tensor w3v = Tensor.of(Device.CPU, DType.F32, w3.toFloatArray(), 3, 3, 3);
                 Tensor y3 = DepthwiseConv3x3.apply(x, w3v, null, Options.defaults())) {
                assertArrayEquals(y3.toFloatArray(), y4.toFloatArray());
            }
        }
    }

    @Test void optionsValidateAndBuild() {
        assertEquals("stride", assertThrows(ArgumentException.class, () -> Options.builder().stride(3).build()).argument());
        assertEquals("layout", assertThrows(ArgumentException.class, () -> Options.builder().layout(null).build()).argument());
        assertEquals("backend", assertThrows(ArgumentException.class, () -> Options.builder().backend(Backend.REFERENCE).build()).argument());
        Options o = Options.builder().stride(2).layout(Layout.NHWC).activation(Activation.GELU_TANH).backend(Backend.CUSTOM).build();
        assertEquals(new Options(2, Layout.NHWC, Activation.GELU_TANH, Backend.CUSTOM), o);
        assertEquals(Backend.VENDOR, o.withBackend(Backend.VENDOR).backend());
        assertEquals(Activation.SILU, o.withActivation(Activation.SILU).activation());
    }

    @Test void problemCountsTheFloorBytes() {
        DepthwiseConv3x3.Problem p = new DepthwiseConv3x3.Problem(DType.F16, Layout.NCHW, 32, 256, 56, 56, 1, Activation.SILU, true, false);
        long e = 32L * 256 * 56 * 56;
        assertEquals(2 * (e + e + 9 * 256 + 256), p.minBytes());
        DepthwiseConv3x3.Problem s2 = new DepthwiseConv3x3.Problem(DType.F32, Layout.NHWC, 1, 8, 7, 7, 2, Activation.NONE, false, true);
        assertEquals(4 * (8 * 49 + 2 * 8 * 16 + 72), s2.minBytes());
    }
}
