package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import static dev.gapfill.ops.ValidationRule.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Validation and the CPU backend of the elementwise op (runs everywhere). */
class ElementwiseValidationProperties {
    /**
     * On the CPU too, an out one element into its input is refused: the reference writes out[i] before it reads a[i + 1],
     * so every element would have become a[0]. Exactly the input still runs in place.
     */
    @Test void aHostOutPartlyOverlappingAnInputIsRefused() {
        try (Tensor p = Tensor.of(Device.CPU, DType.F32, new float[] {1, 2, 3, 4, 5, 6, 7, 8, 9}, 9);
             Tensor b = Tensor.of(Device.CPU, DType.F32, new float[] {1, 1, 1, 1, 1, 1, 1, 1}, 8)) {
            Tensor a = p.strided(new long[] {8}, new long[] {1}, 0);
            Tensor out = p.strided(new long[] {8}, new long[] {1}, 1);
            assertEquals("out", assertThrows(ArgumentException.class, () -> Elementwise.scaleAdd(a, b, 1f, 0f, out, null)).argument());
            Elementwise.scaleAdd(a, b, 2f, 1f, a, null);  // in place
            assertEquals(3.0, a.getDouble(0));
            assertEquals(17.0, a.getDouble(7));
        }
    }

    @Property(tries = 50)
    void cpuBackendIsTheReference(@ForAll @IntRange(min = 1, max = 500) int n, @ForAll float alpha) {
        float[] x = new float[n];
        float[] y = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = i * 0.25f - 3;
            y[i] = 1.5f - i;
        }
        float a = Float.isFinite(alpha) ? Math.max(-1e3f, Math.min(1e3f, alpha)) : 1f;
        try (Tensor ta = Tensor.of(Device.CPU, DType.F32, x, n); Tensor tb = Tensor.of(Device.CPU, DType.F32, y, n);
             Tensor out = Elementwise.scaleAdd(ta, tb, a, 2f)) {
            for (int i = 0; i < n; i++) {
                assertEquals((float) ((double) a * x[i] + 2.0 * y[i]), out.toFloatArray()[i]);
            }
        }
    }

    @Property(tries = 30)
    void mismatchedShapesAreRejected(@ForAll @IntRange(min = 1, max = 50) int n, @ForAll @IntRange(min = 1, max = 50) int m) {
        if (n == m) {
            return;
        }
        try (Tensor a = Tensor.empty(Device.CPU, DType.F16, n); Tensor b = Tensor.empty(Device.CPU, DType.F16, m)) {
            ArgumentException e = assertThrows(ArgumentException.class, () -> Elementwise.scaleAdd(a, b, 1, 1));
            assertEquals("b", e.argument());
        }
    }

    @Test void wrongDtypesAndClosedTensorsAreRejected() {
        try (Tensor a = Tensor.empty(Device.CPU, DType.I32, 4); Tensor b = Tensor.empty(Device.CPU, DType.I32, 4)) {
            assertEquals("a", assertThrows(ArgumentException.class, () -> Elementwise.scaleAdd(a, b, 1, 1)).argument());
        }
        Tensor a = Tensor.empty(Device.CPU, DType.F32, 4);
        Tensor b = Tensor.empty(Device.CPU, DType.F32, 4);
        b.close();
        assertEquals("b", assertThrows(ArgumentException.class, () -> Elementwise.scaleAdd(a, b, 1, 1)).argument());
        a.close();
    }

    @Test void backendPropertyOverridesAuto() {
        System.setProperty(Backend.PROPERTY, "vendor");
        try {
            assertEquals(Backend.VENDOR, Backend.resolve(Backend.AUTO));
            assertEquals(Backend.CUSTOM, Backend.resolve(Backend.CUSTOM));
            System.setProperty(Backend.PROPERTY, "nonsense");
            assertEquals(Backend.PROPERTY, assertThrows(ArgumentException.class, () -> Backend.resolve(Backend.AUTO)).argument());
            System.setProperty(Backend.PROPERTY, "reference");  // was taken as AUTO without a word
            assertEquals(Backend.PROPERTY, assertThrows(ArgumentException.class, () -> Backend.resolve(Backend.AUTO)).argument());
        } finally {
            System.clearProperty(Backend.PROPERTY);
        }
        assertEquals(Backend.AUTO, Backend.resolve(Backend.AUTO));
    }

    // ------------------------------------------------------------------ every validation rule, on random problems

    private static final DType[] FLOATS = {DType.F32, DType.F16, DType.BF16};

    private static void add(RuleCheck.Cases c, Tensor baseOut, ValidationRule r, Tensor a, Tensor b, float alpha, float beta, Tensor out) {
        c.add(r, "scaleAdd(a, b, alpha, beta, out, stream)", () -> Elementwise.scaleAdd(a, b, alpha, beta, out, null));
        if (out == baseOut) {
            c.add(r, "scaleAdd(a, b, alpha, beta)", () -> RuleCheck.discard(Elementwise.scaleAdd(a, b, alpha, beta)));
        }
    }

    /** Every scaleAdd rule for inputs of {@code shape} on {@code f}'s device. */
    static RuleCheck.Cases cases(Fixture f, DType dt, long[] shape, Tensor a, Tensor b, Tensor out) {
        RuleCheck.Cases c = new RuleCheck.Cases();
        java.util.Random rnd = f.rnd;
        float al = rnd.nextFloat() * 4 - 2;
        float be = rnd.nextFloat() * 4 - 2;
        add(c, out, EW_A_NULL, null, b, al, be, out);
        add(c, out, EW_B_NULL, a, null, al, be, out);
        c.add(EW_OUT_NULL, "scaleAdd(a, b, alpha, beta, out, stream)", () -> Elementwise.scaleAdd(a, b, al, be, null, null));
        add(c, out, EW_A_CLOSED, f.closed(dt, shape), b, al, be, out);
        add(c, out, EW_B_CLOSED, a, f.closed(dt, shape), al, be, out);
        add(c, out, EW_OUT_CLOSED, a, b, al, be, f.closed(dt, shape));
        DType ints = rnd.nextBoolean() ? DType.I8 : DType.I32;
        DType other = FLOATS[(java.util.Arrays.asList(FLOATS).indexOf(dt) + 1 + rnd.nextInt(2)) % 3];
        add(c, out, EW_A_DTYPE, f.random(ints, shape), f.random(ints, shape), al, be, out);
        add(c, out, EW_B_DTYPE, a, f.random(other, shape), al, be, out);
        add(c, out, EW_OUT_DTYPE, a, b, al, be, f.poisoned(other, shape));
        long[] s2 = shape.clone();
        s2[rnd.nextInt(s2.length)] += 1 + rnd.nextInt(3);
        long[] flat = {TensorValidationProperties.numel(shape)};
        long[] wrong = rnd.nextBoolean() || shape.length == 1 ? s2 : flat;
        add(c, out, EW_B_SHAPE, a, f.random(dt, wrong), al, be, out);
        add(c, out, EW_OUT_SHAPE, a, b, al, be, f.poisoned(dt, wrong));
        add(c, out, EW_B_DEVICE, a, f.elsewhere(dt, shape), al, be, out);
        add(c, out, EW_OUT_DEVICE, a, b, al, be, f.elsewhere(dt, shape));
        c.whereStridable(EW_A_CONTIGUOUS, () -> add(c, out, EW_A_CONTIGUOUS, f.strided(dt, shape), b, al, be, out), shape);
        c.whereStridable(EW_B_CONTIGUOUS, () -> add(c, out, EW_B_CONTIGUOUS, a, f.strided(dt, shape), al, be, out), shape);
        c.whereStridable(EW_OUT_CONTIGUOUS, () -> add(c, out, EW_OUT_CONTIGUOUS, a, b, al, be, f.strided(dt, shape)), shape);
        Fixture big = f.fakes();
        Tensor huge = big.fake(DType.F16, 1L << 31);
        add(c, out, EW_A_INT32, huge, big.fake(DType.F16, 1L << 31), al, be, out);
        // device-side: out partly overlapping a or b (shifted by at least one element; exactly a or b would be in place)
        Fixture d = f.deviceSide();
        long n2 = 2 + rnd.nextInt(40);
        long[] s1 = {n2};
        long shift = (long) dt.bytes() * (1 + rnd.nextInt((int) n2 - 1));
        Tensor[] oa = d.overlappingBytes(dt, s1, dt, s1, shift);
        add(c, out, EW_OUT_OVERLAP, oa[0], d.random(dt, s1), al, be, oa[1]);
        Tensor[] ob = d.overlappingBytes(dt, s1, dt, s1, shift);
        add(c, out, EW_OUT_OVERLAP, d.random(dt, s1), ob[0], al, be, ob[1]);
        Tensor[] oo = d.overlappingBytes(dt, s1, dt, s1, shift);  // out before a in memory
        add(c, out, EW_OUT_OVERLAP, oo[1], d.random(dt, s1), al, be, oo[0]);
        if (f.gpu()) {
            // n + the grid stride past 2^31-1: the kernel's int index would wrap (2^31-2 elements: past it on any GPU), in place
            Tensor x = f.empty(DType.F16, Integer.MAX_VALUE - 1L);
            c.add(EW_A_GRID_INT32, "scaleAdd(a, b, alpha, beta, out, stream)", () -> Elementwise.scaleAdd(x, x, al, be, x, null));
            c.add(EW_A_GRID_INT32, "scaleAdd(a, b, alpha, beta)", () -> RuleCheck.discard(Elementwise.scaleAdd(x, x, al, be)));
        }
        float[] bad = {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY};
        float x = bad[rnd.nextInt(3)];
        add(c, out, EW_SCALARS_NONFINITE, a, b, x, be, out);
        add(c, out, EW_SCALARS_NONFINITE, a, b, al, x, out);
        if (f.gpu()) {
            RuleCheck.streamCases(c, f, EW_STREAM_CLOSED, EW_STREAM_DEVICE, java.util.Map.of(
                    "scaleAdd(a, b, alpha, beta, out, stream)", st -> () -> Elementwise.scaleAdd(a, b, al, be, out, st)));
        }
        return c;
    }

    @Property(tries = 40)
    @Covers({EW_A_NULL, EW_B_NULL, EW_OUT_NULL, EW_A_CLOSED, EW_B_CLOSED, EW_OUT_CLOSED, EW_A_DTYPE, EW_B_DTYPE, EW_OUT_DTYPE, EW_B_SHAPE,
            EW_OUT_SHAPE, EW_B_DEVICE, EW_OUT_DEVICE, EW_A_CONTIGUOUS, EW_B_CONTIGUOUS, EW_OUT_CONTIGUOUS, EW_A_INT32, EW_OUT_OVERLAP,
            EW_SCALARS_NONFINITE})
    void everyRuleIsEnforcedBeforeAnyWork(@ForAll @IntRange(min = 0, max = 2) int dti, @ForAll @IntRange(min = 1, max = 3) int rank,
                                          @ForAll @IntRange(min = 1, max = 7) int d0, @ForAll @IntRange(min = 1, max = 7) int d1,
                                          @ForAll @IntRange(min = 1, max = 7) int d2, @ForAll long seed) {
        DType dt = FLOATS[dti];
        long[] shape = TensorValidationProperties.shape(rank, d0, d1, d2);
        try (Fixture f = new Fixture(Device.CPU, seed)) {
            Tensor a = f.random(dt, shape);
            Tensor b = f.random(dt, shape);
            Tensor out = f.poisoned(dt, shape);
            RuleCheck.run(f, cases(f, dt, shape, a, b, out), () -> Elementwise.scaleAdd(a, b, 0.5f, 2f, out, null), out);
        }
    }
}
