package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Stream;
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

import static dev.gapfill.ops.ValidationRule.*;
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

    // ------------------------------------------------------------------ every validation rule, on random problems

    /** A valid problem: x, w (rank 3 or 4), optional bias and residual, a poisoned out, options. */
    record Problem(DType dt, Options o, long[] xs, long[] ys, long c, Tensor x, Tensor w, Tensor bias, Tensor res, Tensor out) {
        static Problem on(Fixture f, DType dt, Layout layout, int stride, int n, int c, int h, int w, boolean w4, boolean withBias,
                          boolean withRes) {
            Options o = Options.builder().stride(stride).layout(layout).activation(Activation.values()[f.rnd.nextInt(6)]).build();
            long[] xs = layout == Layout.NCHW ? new long[] {n, c, h, w} : new long[] {n, h, w, c};
            long[] ys = DepthwiseConv3x3.outputShape(xs, o);
            return new Problem(dt, o, xs, ys, c, f.random(dt, xs), f.random(dt, w4 ? new long[] {c, 1, 3, 3} : new long[] {c, 3, 3}),
                    withBias ? f.random(dt, c) : null, withRes ? f.random(dt, ys) : null, f.poisoned(dt, ys));
        }
    }

    /**
     * Adds a case through every overload that can express it: apply(x, w, bias, residual, options) allocates out
     * (so out must not be the argument under test), apply(x, w, bias, options) also passes no residual.
     */
    private static void add(RuleCheck.Cases c, ValidationRule r, String target, Tensor x, Tensor w, Tensor bias, Tensor res, Tensor out,
                            Options o) {
        c.add(r, "apply(x, w, bias, residual, out, options, stream)", () -> DepthwiseConv3x3.apply(x, w, bias, res, out, o, null));
        c.add(r, "decide(x, w, bias, residual, out, options)", () -> DepthwiseConv3x3.decide(x, w, bias, res, out, o));
        if (!target.equals("out")) {
            c.add(r, "apply(x, w, bias, residual, options)", () -> RuleCheck.discard(DepthwiseConv3x3.apply(x, w, bias, res, o)));
            if (!target.equals("residual")) {
                c.add(r, "apply(x, w, bias, options)", () -> RuleCheck.discard(DepthwiseConv3x3.apply(x, w, bias, o)));
            }
        }
    }

    private static DType other(DType dt, java.util.Random rnd) {
        return DTS[(java.util.Arrays.asList(DTS).indexOf(dt) + 1 + rnd.nextInt(2)) % 3];
    }

    /** Every DepthwiseConv3x3 rule on {@code p}; GPU-only rules on a GPU fixture. */
    static RuleCheck.Cases cases(Fixture f, Problem p) {
        RuleCheck.Cases c = new RuleCheck.Cases();
        java.util.Random rnd = f.rnd;
        DType dt = p.dt();
        Options o = p.o();
        Tensor x = p.x();
        Tensor w = p.w();
        Tensor b = p.bias();
        Tensor r = p.res();
        Tensor y = p.out();
        long ch = p.c();
        long[] ws = w.shape();
        long[] ys = p.ys();
        add(c, DW_OPTIONS_NULL, "", x, w, b, r, y, null);
        c.add(DW_OPTIONS_NULL, "outputShape(xShape, options)", () -> DepthwiseConv3x3.outputShape(p.xs(), null));
        int badStride = rnd.nextBoolean() ? -rnd.nextInt(3) : 3 + rnd.nextInt(5);
        c.add(DW_OPTIONS_STRIDE, "new Options", () -> new Options(badStride, o.layout(), o.activation(), o.backend()));
        c.add(DW_OPTIONS_STRIDE, "Builder.build", () -> DepthwiseConv3x3.Options.builder().stride(badStride).build());
        c.add(DW_OPTIONS_LAYOUT_NULL, "new Options", () -> new Options(o.stride(), null, o.activation(), o.backend()));
        c.add(DW_OPTIONS_LAYOUT_NULL, "Builder.build", () -> DepthwiseConv3x3.Options.builder().layout(null).build());
        c.add(DW_OPTIONS_ACTIVATION_NULL, "new Options", () -> new Options(o.stride(), o.layout(), null, o.backend()));
        c.add(DW_OPTIONS_ACTIVATION_NULL, "Options.withActivation", () -> o.withActivation(null));
        c.add(DW_OPTIONS_BACKEND, "new Options", () -> new Options(o.stride(), o.layout(), o.activation(), null));
        c.add(DW_OPTIONS_BACKEND, "Options.withBackend", () -> o.withBackend(Backend.REFERENCE));
        c.add(DW_OPTIONS_BACKEND, "Builder.build", () -> DepthwiseConv3x3.Options.builder().backend(rnd.nextBoolean() ? null : Backend.REFERENCE).build());
        add(c, DW_X_NULL, "", null, w, b, r, y, o);
        add(c, DW_W_NULL, "", x, null, b, r, y, o);
        c.add(DW_OUT_NULL, "apply(x, w, bias, residual, out, options, stream)", () -> DepthwiseConv3x3.apply(x, w, b, r, null, o, null));
        c.add(DW_OUT_NULL, "decide(x, w, bias, residual, out, options)", () -> DepthwiseConv3x3.decide(x, w, b, r, null, o));
        add(c, DW_X_CLOSED, "", f.closed(dt, p.xs()), w, b, r, y, o);
        add(c, DW_W_CLOSED, "", x, f.closed(dt, ws), b, r, y, o);
        add(c, DW_OUT_CLOSED, "out", x, w, b, r, f.closed(dt, ys), o);
        add(c, DW_BIAS_CLOSED, "", x, w, f.closed(dt, ch), r, y, o);
        add(c, DW_RES_CLOSED, "residual", x, w, b, f.closed(dt, ys), y, o);
        long[] x3 = {p.xs()[0] * p.xs()[1], p.xs()[2], p.xs()[3]};
        add(c, DW_X_RANK, "", f.random(dt, rnd.nextBoolean() ? x3 : new long[] {1, p.xs()[0], p.xs()[1], p.xs()[2], p.xs()[3]}), w, b, r, y, o);
        add(c, DW_X_DTYPE, "", f.random(rnd.nextBoolean() ? DType.I8 : DType.I32, p.xs()), w, b, r, y, o);
        add(c, DW_W_RANK, "", x, f.random(dt, rnd.nextBoolean() ? new long[] {ch, 9} : new long[] {ch, 1, 1, 3, 3}), b, r, y, o);
        long[][] wrongW = {{ch + 1, 3, 3}, {ch, 3, 2 + 2 * rnd.nextInt(2)}, {ch, 2, 3, 3}, {ch + 1, 1, 3, 3}, {ch, 1, 3, 1}};
        add(c, DW_W_SHAPE, "", x, f.random(dt, wrongW[rnd.nextInt(wrongW.length)]), b, r, y, o);
        add(c, DW_W_DTYPE, "", x, f.random(other(dt, rnd), ws), b, r, y, o);
        add(c, DW_BIAS_RANK, "", x, w, f.random(dt, 1, ch), r, y, o);
        add(c, DW_BIAS_SHAPE, "", x, w, f.random(dt, ch + 1 + rnd.nextInt(3)), r, y, o);
        add(c, DW_BIAS_DTYPE, "", x, w, f.random(other(dt, rnd), ch), r, y, o);
        long[] ysBad = ys.clone();
        ysBad[1 + rnd.nextInt(3)] += 1 + rnd.nextInt(2);
        add(c, DW_OUT_SHAPE, "out", x, w, b, r, f.poisoned(dt, ysBad), o);
        add(c, DW_OUT_DTYPE, "out", x, w, b, r, f.poisoned(other(dt, rnd), ys), o);
        add(c, DW_RES_SHAPE, "residual", x, w, b, f.random(dt, ysBad), y, o);
        add(c, DW_RES_DTYPE, "residual", x, w, b, f.random(other(dt, rnd), ys), y, o);
        add(c, DW_W_DEVICE, "", x, f.elsewhere(dt, ws), b, r, y, o);
        add(c, DW_BIAS_DEVICE, "", x, w, f.elsewhere(dt, ch), r, y, o);
        add(c, DW_RES_DEVICE, "residual", x, w, b, f.elsewhere(dt, ys), y, o);
        add(c, DW_OUT_DEVICE, "out", x, w, b, r, f.elsewhere(dt, ys), o);
        c.whereStridable(DW_X_CONTIGUOUS, () -> add(c, DW_X_CONTIGUOUS, "", f.strided(dt, p.xs()), w, b, r, y, o), p.xs());
        c.whereStridable(DW_W_CONTIGUOUS, () -> add(c, DW_W_CONTIGUOUS, "", x, f.strided(dt, ws), b, r, y, o), ws);
        c.whereStridable(DW_OUT_CONTIGUOUS, () -> add(c, DW_OUT_CONTIGUOUS, "out", x, w, b, r, f.strided(dt, ys), o), ys);
        c.whereStridable(DW_BIAS_CONTIGUOUS, () -> add(c, DW_BIAS_CONTIGUOUS, "", x, w, f.strided(dt, ch), r, y, o), ch);
        c.whereStridable(DW_RES_CONTIGUOUS, () -> add(c, DW_RES_CONTIGUOUS, "residual", x, w, b, f.strided(dt, ys), y, o), ys);
        Fixture big = f.fakes();
        Options nchw1 = Options.defaults();
        long[] hugeX = {1, 1, 1L << 16, 1L << 15};
        add(c, DW_X_INT32, "", big.fake(DType.F16, hugeX), big.fake(DType.F16, 1, 3, 3), null, null, big.fake(DType.F16, hugeX), nchw1);
        Fixture d = f.deviceSide();
        Tensor dx = d.random(dt, p.xs());
        Tensor dw = d.random(dt, ws);
        Tensor db = d.random(dt, ch);
        Tensor dy = d.poisoned(dt, ys);
        Tensor[] ox = d.overlapping(dt, p.xs(), ys);
        add(c, DW_OUT_OVERLAP_X, "out", ox[0], dw, db, null, ox[1], o);
        Tensor[] ow = d.overlapping(dt, ws, ys);
        add(c, DW_OUT_OVERLAP_W, "out", dx, ow[0], db, null, ow[1], o);
        Tensor[] ob = d.overlapping(dt, new long[] {ch}, ys);
        add(c, DW_OUT_OVERLAP_BIAS, "out", dx, dw, ob[0], null, ob[1], o);
        if (TensorValidationProperties.numel(ys) > 1) {
            Tensor[] or = d.overlapping(dt, ys, ys);
            add(c, DW_OUT_OVERLAP_RES, "out", dx, dw, db, or[0], or[1], o);
        } else {
            // one output element: a residual either is out or is disjoint from it; take two channels instead
            Options o2 = new Options(o.stride(), Layout.NCHW, o.activation(), o.backend());
            long[] ys2 = {1, 2, 1, 1};
            Tensor[] or = d.overlapping(dt, ys2, ys2);
            add(c, DW_OUT_OVERLAP_RES, "out", d.random(dt, 1, 2, 1, 1), d.random(dt, 2, 3, 3), d.random(dt, 2), or[0], or[1], o2);
        }
        c.add(DW_OUTPUTSHAPE_X, "outputShape(xShape, options)", () -> DepthwiseConv3x3.outputShape(null, o));
        c.add(DW_OUTPUTSHAPE_X, "outputShape(xShape, options)", () -> DepthwiseConv3x3.outputShape(rnd.nextBoolean() ? x3 : new long[] {1, 2, 3, 4, 5}, o));
        int[] dims = {1 + rnd.nextInt(4), 1 + rnd.nextInt(9), 1 + rnd.nextInt(9), 1 + rnd.nextInt(9)};
        dims[rnd.nextInt(4)] = -rnd.nextInt(3);
        c.add(DW_PROBLEM_SHAPE, "new Problem", () -> new DepthwiseConv3x3.Problem(dt, o.layout(), dims[0], dims[1], dims[2], dims[3], 1,
                Activation.NONE, false, false));
        c.add(DW_PROBLEM_STRIDE, "new Problem", () -> new DepthwiseConv3x3.Problem(dt, o.layout(), 1, 2, 3, 4, badStride, Activation.NONE,
                false, false));
        c.add(DW_PROBLEM_DTYPE, "new Problem", () -> new DepthwiseConv3x3.Problem(rnd.nextBoolean() ? null : DType.I8, o.layout(), 1, 2, 3, 4,
                1, Activation.NONE, false, false));
        c.add(DW_PROBLEM_LAYOUT, "new Problem", () -> new DepthwiseConv3x3.Problem(dt, null, 1, 2, 3, 4, 1, Activation.NONE, false, false));
        c.add(DW_PROBLEM_ACT, "new Problem", () -> new DepthwiseConv3x3.Problem(dt, o.layout(), 1, 2, 3, 4, 1, null, false, false));
        if (f.gpu()) {
            // the VENDOR path's GELU pass over y: 2^31-2 elements (stride 1: y is x's size) plus any grid stride wraps its int index
            long[] hx = {1, 1, 2L * 3 * 3 * 7 * 11, 31L * 151 * 331};
            Tensor gx = f.empty(DType.F16, hx);
            Tensor gy = f.empty(DType.F16, hx);
            Tensor gw = f.random(DType.F16, 1, 3, 3);
            Options gelu = new Options(1, Layout.NCHW, rnd.nextBoolean() ? Activation.GELU_ERF : Activation.GELU_TANH, Backend.VENDOR);
            c.add(DW_GELU_INT32, "apply(x, w, bias, residual, out, options, stream)", () -> DepthwiseConv3x3.apply(gx, gw, null, null, gy, gelu, null));
            c.add(DW_GELU_INT32, "apply(x, w, bias, options)", () -> RuleCheck.discard(DepthwiseConv3x3.apply(gx, gw, null, gelu)));
            RuleCheck.streamCases(c, f, DW_STREAM_CLOSED, DW_STREAM_DEVICE, java.util.Map.of(
                    "apply(x, w, bias, residual, out, options, stream)", st -> () -> DepthwiseConv3x3.apply(x, w, b, r, y, o, st)));
        }
        return c;
    }

    @Property(tries = 25)
    @Covers({DW_OPTIONS_NULL, DW_OPTIONS_STRIDE, DW_OPTIONS_LAYOUT_NULL, DW_OPTIONS_ACTIVATION_NULL, DW_OPTIONS_BACKEND, DW_X_NULL, DW_W_NULL,
            DW_OUT_NULL, DW_X_CLOSED, DW_W_CLOSED, DW_OUT_CLOSED, DW_BIAS_CLOSED, DW_RES_CLOSED, DW_X_RANK, DW_X_DTYPE, DW_W_RANK, DW_W_SHAPE,
            DW_W_DTYPE, DW_BIAS_RANK, DW_BIAS_SHAPE, DW_BIAS_DTYPE, DW_OUT_SHAPE, DW_OUT_DTYPE, DW_RES_SHAPE, DW_RES_DTYPE, DW_W_DEVICE,
            DW_BIAS_DEVICE, DW_RES_DEVICE, DW_OUT_DEVICE, DW_X_CONTIGUOUS, DW_W_CONTIGUOUS, DW_OUT_CONTIGUOUS, DW_BIAS_CONTIGUOUS,
            DW_RES_CONTIGUOUS, DW_X_INT32, DW_OUT_OVERLAP_X, DW_OUT_OVERLAP_W, DW_OUT_OVERLAP_BIAS, DW_OUT_OVERLAP_RES, DW_OUTPUTSHAPE_X,
            DW_PROBLEM_SHAPE, DW_PROBLEM_STRIDE, DW_PROBLEM_DTYPE, DW_PROBLEM_LAYOUT, DW_PROBLEM_ACT})
    void everyRuleIsEnforcedBeforeAnyWork(@ForAll @IntRange(min = 0, max = 2) int dti, @ForAll @IntRange(min = 0, max = 1) int li,
                                          @ForAll @IntRange(min = 1, max = 2) int stride, @ForAll @IntRange(min = 1, max = 2) int n,
                                          @ForAll @IntRange(min = 1, max = 7) int c, @ForAll @IntRange(min = 1, max = 7) int h,
                                          @ForAll @IntRange(min = 1, max = 7) int w, @ForAll boolean w4, @ForAll boolean withBias,
                                          @ForAll boolean withRes, @ForAll long seed) {
        try (Fixture f = new Fixture(Device.CPU, seed)) {
            Problem p = Problem.on(f, DTS[dti], Layout.values()[li], stride, n, c, h, w, w4, withBias, withRes);
            RuleCheck.run(f, cases(f, p), () -> DepthwiseConv3x3.apply(p.x(), p.w(), p.bias(), p.res(), p.out(), p.o(), null), p.out());
        }
    }
}
