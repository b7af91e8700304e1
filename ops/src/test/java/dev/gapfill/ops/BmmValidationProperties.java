package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.ops.reference.BmmReference;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static dev.gapfill.ops.ValidationRule.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Validation of {@link Bmm} and its CPU backend (the reference), on random shapes. Runs everywhere. */
class BmmValidationProperties {
    private static final DType[] DTYPES = {DType.F32, DType.F16, DType.BF16};

    /** Naive triple loop over logical indices, independent of BmmReference's indexing. */
    private static double naive(Tensor a, Tensor b, int bi, int i, int j, int k, boolean ta, boolean tb) {
        long m = ta ? a.dim(2) : a.dim(1);
        double s = 0;
        for (int kk = 0; kk < k; kk++) {
            double x = ta ? a.getDouble((bi * (long) k + kk) * m + i) : a.getDouble((bi * m + i) * k + kk);
            long n = b.rank() == 2 ? (tb ? b.dim(0) : b.dim(1)) : (tb ? b.dim(1) : b.dim(2));
            long bOff = b.rank() == 2 ? 0 : (long) bi * k * n;
            double y = tb ? b.getDouble(bOff + (long) j * k + kk) : b.getDouble(bOff + (long) kk * n + j);
            s += x * y;
        }
        return s;
    }

    @Property(tries = 60)
    void cpuBackendIsTheReference(@ForAll @IntRange(min = 1, max = 5) int batch, @ForAll @IntRange(min = 1, max = 19) int m,
                                  @ForAll @IntRange(min = 1, max = 19) int n, @ForAll @IntRange(min = 1, max = 19) int k,
                                  @ForAll @IntRange(min = 0, max = 2) int dt, @ForAll boolean ta, @ForAll boolean tb,
                                  @ForAll boolean shared, @ForAll long seed) {
        DType dtype = DTYPES[dt];
        Random rnd = new Random(seed);
        long[] aShape = ta ? new long[] {batch, k, m} : new long[] {batch, m, k};
        long[] bInner = tb ? new long[] {n, k} : new long[] {k, n};
        long[] bShape = shared ? bInner : new long[] {batch, bInner[0], bInner[1]};
        Bmm.Options o = Bmm.Options.defaults().transposes(ta, tb);
        try (Tensor a = Poison.random(Device.CPU, dtype, rnd, aShape); Tensor b = Poison.random(Device.CPU, dtype, rnd, bShape);
             Tensor c = Bmm.bmm(a, b, o); Tensor given = Poison.poisoned(Device.CPU, dtype, batch, m, n)) {
            assertEquals(Decision.reference(), Bmm.decide(a, b, o));
            Bmm.bmm(a, b, given, o, null);
            BmmReference.Result r = BmmReference.exact(a, b, ta, tb);
            for (int bi = 0; bi < batch; bi++) {
                for (int i = 0; i < m; i++) {
                    for (int j = 0; j < n; j++) {
                        int idx = (bi * m + i) * n + j;
                        double exact = naive(a, b, bi, i, j, k, ta, tb);
                        assertEquals(exact, r.exact()[idx], 1e-12 * Math.max(1, r.absSum()[idx]));
                        assertTrue(r.absSum()[idx] >= Math.abs(r.exact()[idx]));
                        // one rounding of the fp64 value to the dtype
                        try (Tensor one = Tensor.empty(Device.CPU, dtype, 1)) {
                            one.setDouble(0, r.exact()[idx]);
                            assertEquals(one.getDouble(0), c.getDouble(idx), "element " + idx);
                            assertEquals(one.getDouble(0), given.getDouble(idx), "caller-supplied output, element " + idx);
                        }
                    }
                }
            }
        }
    }

    @Property(tries = 30)
    void sequentialFmaIsCloseToTheExactSum(@ForAll @IntRange(min = 1, max = 64) int k, @ForAll long seed) {
        Random rnd = new Random(seed);
        try (Tensor a = Poison.random(Device.CPU, DType.F32, rnd, 2, 3, k); Tensor b = Poison.random(Device.CPU, DType.F32, rnd, k, 5)) {
            BmmReference.Result r = BmmReference.exact(a, b, false, false);
            double[] seq = BmmReference.sequentialFmaF32(a, b, false, false);
            double gamma = k * 0x1p-24 / (1 - k * 0x1p-24);
            for (int i = 0; i < seq.length; i++) {
                assertEquals((float) seq[i], seq[i], 0.0, "a float value");
                assertTrue(Math.abs(seq[i] - r.exact()[i]) <= gamma * r.absSum()[i] + Double.MIN_NORMAL, "element " + i);
            }
        }
    }

    @Property(tries = 40)
    void mismatchedReductionIsRejected(@ForAll @IntRange(min = 1, max = 9) int k, @ForAll @IntRange(min = 1, max = 9) int k2,
                                       @ForAll boolean shared) {
        if (k == k2) {
            return;
        }
        try (Tensor a = Tensor.empty(Device.CPU, DType.F16, 2, 3, k);
             Tensor b = shared ? Tensor.empty(Device.CPU, DType.F16, k2, 4) : Tensor.empty(Device.CPU, DType.F16, 2, k2, 4)) {
            ArgumentException e = assertThrows(ArgumentException.class, () -> Bmm.bmm(a, b));
            assertEquals("b", e.argument());
            assertTrue(e.getMessage().contains("k=" + k), e.getMessage());
        }
    }

    @Test void batchMismatchOutputShapeDtypeRankAndClosedAreNamed() {
        try (Tensor a = Tensor.empty(Device.CPU, DType.F32, 2, 3, 4); Tensor b3 = Tensor.empty(Device.CPU, DType.F32, 3, 4, 5);
             Tensor bh = Tensor.empty(Device.CPU, DType.F16, 2, 4, 5); Tensor b = Tensor.empty(Device.CPU, DType.F32, 2, 4, 5);
             Tensor badOut = Tensor.empty(Device.CPU, DType.F32, 2, 5, 3); Tensor halfOut = Tensor.empty(Device.CPU, DType.F16, 2, 3, 5);
             Tensor a2 = Tensor.empty(Device.CPU, DType.F32, 3, 4); Tensor ints = Tensor.empty(Device.CPU, DType.I32, 2, 3, 4)) {
            assertEquals("b", assertThrows(ArgumentException.class, () -> Bmm.bmm(a, b3)).argument());
            assertEquals("b", assertThrows(ArgumentException.class, () -> Bmm.bmm(a, bh)).argument());
            assertEquals("a", assertThrows(ArgumentException.class, () -> Bmm.bmm(a2, b)).argument());
            assertEquals("a", assertThrows(ArgumentException.class, () -> Bmm.bmm(ints, b)).argument());
            assertEquals("out", assertThrows(ArgumentException.class, () -> Bmm.bmm(a, b, badOut, Bmm.Options.defaults(), null)).argument());
            assertEquals("out", assertThrows(ArgumentException.class, () -> Bmm.bmm(a, b, halfOut, Bmm.Options.defaults(), null)).argument());
            assertEquals("out", assertThrows(ArgumentException.class, () -> Bmm.decide(a, b, badOut, Bmm.Options.defaults())).argument());
            assertEquals("out", assertThrows(ArgumentException.class, () -> Bmm.decide(a, b, halfOut, Bmm.Options.defaults())).argument());
            assertEquals("out", assertThrows(ArgumentException.class, () -> Bmm.decide(a, b, null, Bmm.Options.defaults())).argument());
            try (Tensor out = Tensor.empty(Device.CPU, DType.F32, 2, 3, 5)) {
                assertEquals(Backend.REFERENCE, Bmm.decide(a, b, out, Bmm.Options.defaults()).backend());
            }
            assertEquals("options", assertThrows(ArgumentException.class, () -> Bmm.bmm(a, b, null)).argument());
            // transposing A makes it [batch, k=3, m=4]: k no longer matches b
            assertEquals("b", assertThrows(ArgumentException.class, () -> Bmm.bmm(a, b, Bmm.Options.defaults().transposeA())).argument());
        }
        Tensor a = Tensor.empty(Device.CPU, DType.F32, 1, 2, 2);
        Tensor b = Tensor.empty(Device.CPU, DType.F32, 1, 2, 2);
        b.close();
        assertEquals("b", assertThrows(ArgumentException.class, () -> Bmm.bmm(a, b)).argument());
        a.close();
    }

    @Test void tf32IsAnF32SettingAndNullsAreRejected() {
        try (Tensor a = Tensor.empty(Device.CPU, DType.BF16, 1, 2, 2); Tensor b = Tensor.empty(Device.CPU, DType.BF16, 1, 2, 2)) {
            assertEquals("options.precision", assertThrows(ArgumentException.class, () -> Bmm.bmm(a, b, Bmm.Options.defaults().tf32())).argument());
        }
        assertEquals("options.backend", assertThrows(ArgumentException.class, () -> Bmm.Options.defaults().backend(null)).argument());
        assertEquals("options.precision", assertThrows(ArgumentException.class, () -> Bmm.Options.defaults().precision(null)).argument());
    }

    @Test void nonContiguousInputsAreRejected() {
        try (Tensor base = Tensor.empty(Device.CPU, DType.F32, 2, 4, 4); Tensor b = Tensor.empty(Device.CPU, DType.F32, 2, 2, 3)) {
            Tensor view = base.strided(new long[] {2, 2, 2}, new long[] {16, 4, 2}, 0);
            assertEquals("a", assertThrows(ArgumentException.class, () -> Bmm.bmm(view, b)).argument());
        }
    }

    @Test void tf32F32OnTheCpuIsStillTheExactReference() {
        try (Tensor a = Tensor.of(Device.CPU, DType.F32, new float[] {1.0000001f, 2, 3, 4}, 1, 2, 2);
             Tensor b = Tensor.of(Device.CPU, DType.F32, new float[] {1, 0, 0, 1}, 2, 2);
             Tensor c = Bmm.bmm(a, b, Bmm.Options.defaults().tf32())) {
            assertEquals(1.0000001f, (float) c.getDouble(0));
        }
    }

    // ------------------------------------------------------------------ every validation rule, on random problems

    /** A valid problem on a fixture: a, b, a poisoned out, options. */
    record Problem(DType dt, long batch, long m, long n, long k, boolean ta, boolean tb, boolean shared, Tensor a, Tensor b, Tensor out,
                   Bmm.Options o) {
        static Problem on(Fixture f, DType dt, int batch, int m, int n, int k, boolean ta, boolean tb, boolean shared, Backend backend) {
            long[] as = ta ? new long[] {batch, k, m} : new long[] {batch, m, k};
            long[] bi = tb ? new long[] {n, k} : new long[] {k, n};
            long[] bs = shared ? bi : new long[] {batch, bi[0], bi[1]};
            Bmm.Options o = Bmm.Options.defaults().transposes(ta, tb).backend(backend);
            return new Problem(dt, batch, m, n, k, ta, tb, shared, f.random(dt, as), f.random(dt, bs), f.poisoned(dt, batch, m, n), o);
        }

        long[] aShape() { return a.shape(); }

        long[] bShape() { return b.shape(); }

        long[] outShape() { return new long[] {batch, m, n}; }

        BmmShape shape() { return new BmmShape(dt, batch, m, n, k, ta, tb, shared, Bmm.Precision.EXACT); }
    }

    private static DType otherFloat(DType dt, java.util.Random rnd) {
        DType[] all = {DType.F32, DType.F16, DType.BF16};
        DType o = all[rnd.nextInt(3)];
        return o == dt ? all[(java.util.Arrays.asList(all).indexOf(dt) + 1) % 3] : o;
    }

    /** Adds one case through every overload that can express it (out and options not taken must be the implicit ones). */
    private static void add(RuleCheck.Cases c, Problem p, ValidationRule r, Tensor a, Tensor b, Tensor out, Bmm.Options o) {
        c.add(r, "bmm(a, b, out, options, stream)", () -> Bmm.bmm(a, b, out, o, null));
        c.add(r, "validate(a, b, out, options)", () -> Bmm.validate(a, b, out, o));
        if (out == p.out()) {
            c.add(r, "bmm(a, b, options)", () -> RuleCheck.discard(Bmm.bmm(a, b, o)));
            c.add(r, "decide(a, b, options)", () -> Bmm.decide(a, b, o));
            if (Bmm.Options.defaults().equals(o)) {
                c.add(r, "bmm(a, b)", () -> RuleCheck.discard(Bmm.bmm(a, b)));
            }
        }
    }

    /** Every Bmm rule on {@code p} ({@code f}'s device); GPU-only rules on a GPU fixture. */
    static RuleCheck.Cases cases(Fixture f, Problem p) {
        RuleCheck.Cases c = new RuleCheck.Cases();
        java.util.Random rnd = f.rnd;
        Tensor a = p.a();
        Tensor b = p.b();
        Tensor out = p.out();
        Bmm.Options o = p.o();
        DType dt = p.dt();
        add(c, p, BMM_OPTIONS_NULL, a, b, out, null);
        c.add(BMM_OPTIONS_PRECISION_NULL, "new Options", () -> new Bmm.Options(p.ta(), p.tb(), null, Backend.AUTO));
        c.add(BMM_OPTIONS_PRECISION_NULL, "Options.precision", () -> o.precision(null));
        c.add(BMM_OPTIONS_BACKEND_NULL, "new Options", () -> new Bmm.Options(p.ta(), p.tb(), Bmm.Precision.EXACT, null));
        c.add(BMM_OPTIONS_BACKEND_NULL, "Options.backend", () -> o.backend(null));
        add(c, p, BMM_A_NULL, null, b, out, o);
        add(c, p, BMM_B_NULL, a, null, out, o);
        c.add(BMM_OUT_NULL, "bmm(a, b, out, options, stream)", () -> Bmm.bmm(a, b, null, o, null));
        add(c, p, BMM_A_CLOSED, f.closed(dt, p.aShape()), b, out, o);
        add(c, p, BMM_B_CLOSED, a, f.closed(dt, p.bShape()), out, o);
        add(c, p, BMM_OUT_CLOSED, a, b, f.closed(dt, p.outShape()), o);
        DType intType = rnd.nextBoolean() ? DType.I8 : DType.I32;
        DType other = otherFloat(dt, rnd);
        add(c, p, BMM_A_DTYPE, f.random(intType, p.aShape()), f.random(intType, p.bShape()), out, o);
        add(c, p, BMM_B_DTYPE, a, f.random(other, p.bShape()), out, o);
        add(c, p, BMM_OUT_DTYPE, a, b, f.poisoned(other, p.outShape()), o);
        long[] aWrongRank = rnd.nextBoolean() ? new long[] {p.batch() * p.aShape()[1], p.aShape()[2]} : new long[] {1, p.batch(), p.aShape()[1], p.aShape()[2]};
        add(c, p, BMM_A_RANK, f.random(dt, aWrongRank), b, out, o);
        long[] bWrongRank = rnd.nextBoolean() ? new long[] {b.numel()} : new long[] {1, 1, b.dim(-2), b.dim(-1)};
        add(c, p, BMM_B_RANK, a, f.random(dt, bWrongRank), out, o);
        add(c, p, BMM_B_DEVICE, a, f.elsewhere(dt, p.bShape()), out, o);
        add(c, p, BMM_OUT_DEVICE, a, b, f.elsewhere(dt, p.outShape()), o);
        c.whereStridable(BMM_A_CONTIGUOUS, () -> add(c, p, BMM_A_CONTIGUOUS, f.strided(dt, p.aShape()), b, out, o), p.aShape());
        c.whereStridable(BMM_B_CONTIGUOUS, () -> add(c, p, BMM_B_CONTIGUOUS, a, f.strided(dt, p.bShape()), out, o), p.bShape());
        c.whereStridable(BMM_OUT_CONTIGUOUS, () -> add(c, p, BMM_OUT_CONTIGUOUS, a, b, f.strided(dt, p.outShape()), o), p.outShape());
        long k2 = p.k() + 1 + rnd.nextInt(4);
        long[] bk = p.bShape().clone();
        bk[bk.length - (p.tb() ? 1 : 2)] = k2;
        add(c, p, BMM_B_K, a, f.random(dt, bk), out, o);
        long[] bb = p.shared() ? new long[] {p.batch() + 1 + rnd.nextInt(3), p.bShape()[0], p.bShape()[1]} : p.bShape().clone();
        if (!p.shared()) {
            bb[0] = p.batch() + 1 + rnd.nextInt(3);
        }
        add(c, p, BMM_B_BATCH, a, f.random(dt, bb), out, o);
        long[] os = p.outShape().clone();
        os[1 + rnd.nextInt(2)] += 1 + rnd.nextInt(3);
        add(c, p, BMM_OUT_SHAPE, a, b, f.poisoned(dt, os), o);
        if (dt == DType.F32) {
            DType h = rnd.nextBoolean() ? DType.F16 : DType.BF16;
            Tensor ah = f.random(h, p.aShape());
            Tensor bh = f.random(h, p.bShape());
            Tensor oh = f.poisoned(h, p.outShape());
            c.add(BMM_TF32_DTYPE, "bmm(a, b, out, options, stream)", () -> Bmm.bmm(ah, bh, oh, o.tf32(), null));
            c.add(BMM_TF32_DTYPE, "bmm(a, b, options)", () -> RuleCheck.discard(Bmm.bmm(ah, bh, o.tf32())));
            c.add(BMM_TF32_DTYPE, "decide(a, b, options)", () -> Bmm.decide(ah, bh, o.tf32()));
        } else {
            add(c, p, BMM_TF32_DTYPE, a, b, out, o.tf32());
        }
        // 2^31 elements: fake tensors on every host (never dereferenced)
        Fixture big = f.fakes();
        add(c, p, BMM_A_INT32, big.fake(DType.F16, 1, 1L << 16, 1L << 15), big.fake(DType.F16, 1L << 15, 1), out, Bmm.Options.defaults());
        add(c, p, BMM_B_INT32, big.fake(DType.F16, 1, 1, 1L << 16), big.fake(DType.F16, 1, 1L << 16, 1L << 15), out, Bmm.Options.defaults());
        add(c, p, BMM_OUT_INT32, big.fake(DType.F16, 1, 1L << 16, 1), big.fake(DType.F16, 1, 1L << 16), out, Bmm.Options.defaults());
        // device-side: out overlapping an input (views of one allocation)
        Fixture d = f.deviceSide();
        Tensor[] ov = d.overlapping(dt, p.aShape(), p.outShape());
        Tensor db = d.random(dt, p.bShape());
        c.add(BMM_OUT_OVERLAP, "validate(a, b, out, options)", () -> Bmm.validate(ov[0], db, ov[1], o));
        c.add(BMM_OUT_OVERLAP, "bmm(a, b, out, options, stream)", () -> Bmm.bmm(ov[0], db, ov[1], o, null));
        Tensor[] ovb = d.overlapping(dt, p.bShape(), p.outShape());
        Tensor da = d.random(dt, p.aShape());
        c.add(BMM_OUT_OVERLAP, "bmm(a, b, out, options, stream)", () -> Bmm.bmm(da, ovb[0], ovb[1], o, null));
        DeviceInfo info = f.gpu() ? Gpu.device(f.device).info() : DeviceInfo.h100ForTests();
        c.add(BMM_BACKEND_REFERENCE, "decide(shape, info, backend)", () -> Bmm.decide(p.shape(), info, Backend.REFERENCE));
        BmmShape tooBig = new BmmShape(dt, p.batch(), 129 + rnd.nextInt(100), p.n(), p.k(), p.ta(), p.tb(), p.shared(), Bmm.Precision.EXACT);
        c.add(BMM_CUSTOM_UNSUPPORTED, "decide(shape, info, backend)", () -> Bmm.decide(tooBig, info, Backend.CUSTOM));
        if (f.gpu()) {
            Bmm.Options ref = o.backend(Backend.REFERENCE);  // validate() does not look at the backend: run and decide do
            c.add(BMM_BACKEND_REFERENCE, "bmm(a, b, out, options, stream)", () -> Bmm.bmm(a, b, out, ref, null));
            c.add(BMM_BACKEND_REFERENCE, "bmm(a, b, options)", () -> RuleCheck.discard(Bmm.bmm(a, b, ref)));
            c.add(BMM_BACKEND_REFERENCE, "decide(a, b, options)", () -> Bmm.decide(a, b, ref));
            long m2 = tooBig.m();
            Tensor ab = f.random(dt, p.ta() ? new long[] {p.batch(), p.k(), m2} : new long[] {p.batch(), m2, p.k()});
            Tensor ob = f.poisoned(dt, p.batch(), m2, p.n());
            Bmm.Options custom = o.backend(Backend.CUSTOM);
            c.add(BMM_CUSTOM_UNSUPPORTED, "bmm(a, b, out, options, stream)", () -> Bmm.bmm(ab, b, ob, custom, null));
            c.add(BMM_CUSTOM_UNSUPPORTED, "bmm(a, b, options)", () -> RuleCheck.discard(Bmm.bmm(ab, b, custom)));
            c.add(BMM_CUSTOM_UNSUPPORTED, "decide(a, b, options)", () -> Bmm.decide(ab, b, custom));
            RuleCheck.streamCases(c, f, BMM_STREAM_CLOSED, BMM_STREAM_DEVICE, java.util.Map.of(
                    "bmm(a, b, out, options, stream)", st -> () -> Bmm.bmm(a, b, out, o, st)));
        }
        return c;
    }

    @Property(tries = 30)
    @Covers({BMM_OPTIONS_NULL, BMM_OPTIONS_PRECISION_NULL, BMM_OPTIONS_BACKEND_NULL, BMM_A_NULL, BMM_B_NULL, BMM_OUT_NULL, BMM_A_CLOSED,
            BMM_B_CLOSED, BMM_OUT_CLOSED, BMM_A_DTYPE, BMM_B_DTYPE, BMM_OUT_DTYPE, BMM_A_RANK, BMM_B_RANK, BMM_B_DEVICE, BMM_OUT_DEVICE,
            BMM_A_CONTIGUOUS, BMM_B_CONTIGUOUS, BMM_OUT_CONTIGUOUS, BMM_B_K, BMM_B_BATCH, BMM_OUT_SHAPE, BMM_TF32_DTYPE, BMM_A_INT32,
            BMM_B_INT32, BMM_OUT_INT32, BMM_OUT_OVERLAP, BMM_BACKEND_REFERENCE, BMM_CUSTOM_UNSUPPORTED})
    void everyRuleIsEnforcedBeforeAnyWork(@ForAll @IntRange(min = 0, max = 2) int dti, @ForAll @IntRange(min = 1, max = 4) int batch,
                                          @ForAll @IntRange(min = 1, max = 9) int m, @ForAll @IntRange(min = 1, max = 9) int n,
                                          @ForAll @IntRange(min = 1, max = 9) int k, @ForAll boolean ta, @ForAll boolean tb,
                                          @ForAll boolean shared, @ForAll long seed) {
        try (Fixture f = new Fixture(Device.CPU, seed)) {
            Problem p = Problem.on(f, DTYPES[dti], batch, m, n, k, ta, tb, shared, Backend.AUTO);
            RuleCheck.run(f, cases(f, p), () -> Bmm.bmm(p.a(), p.b(), p.out(), p.o(), null), p.out());
        }
    }
}
