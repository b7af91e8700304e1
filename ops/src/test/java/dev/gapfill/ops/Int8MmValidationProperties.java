package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.HalfFloats;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.reference.Int8MmReference;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static dev.gapfill.ops.ValidationRule.*;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Validation of {@link Int8Mm} and its CPU backend (the reference), on the CPU. */
class Int8MmValidationProperties {
    private static Tensor i8(Random r, long... shape) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        byte[] b = new byte[(int) n];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (r.nextInt(256) - 128);
        }
        return Tensor.ofBytes(Device.CPU, b, shape);
    }

    private static Tensor f32(Random r, float lo, float hi, long n) {
        float[] f = new float[(int) n];
        for (int i = 0; i < f.length; i++) {
            f[i] = lo + (hi - lo) * r.nextFloat();
        }
        return Tensor.of(Device.CPU, DType.F32, f, n);
    }

    @Property(tries = 60)
    void int32OutputIsTheExactSum(@ForAll @IntRange(min = 1, max = 9) int m, @ForAll @IntRange(min = 1, max = 13) int n,
                                  @ForAll @IntRange(min = 1, max = 6) int k16, @ForAll long seed) {
        Random r = new Random(seed);
        int k = 16 * k16;
        try (Tensor a = i8(r, m, k); Tensor w = i8(r, n, k); Tensor out = Int8Mm.mm(a, w)) {
            byte[] av = a.toByteArray();
            byte[] wv = w.toByteArray();
            int[] got = out.toIntArray();
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < n; j++) {
                    int s = 0;
                    for (int q = 0; q < k; q++) {
                        s += av[i * k + q] * wv[j * k + q];
                    }
                    assertEquals(s, got[i * n + j], "acc[" + i + "," + j + "]");
                }
            }
        }
    }

    @Property(tries = 60)
    void dequantizedOutputsRoundTheFp64ValueOnce(@ForAll @IntRange(min = 1, max = 7) int m, @ForAll @IntRange(min = 1, max = 11) int n,
                                                 @ForAll @IntRange(min = 1, max = 4) int k16, @ForAll @IntRange(min = 0, max = 2) int dt,
                                                 @ForAll boolean perToken, @ForAll boolean withBias, @ForAll long seed) {
        DType out = new DType[] {DType.F32, DType.F16, DType.BF16}[dt];
        Random r = new Random(seed);
        int k = 16 * k16;
        try (Tensor a = i8(r, m, k); Tensor w = i8(r, n, k); Tensor as = f32(r, 1e-3f, 5e-2f, perToken ? m : 1);
             Tensor ws = f32(r, 1e-3f, 5e-2f, perToken ? n : 1); Tensor b = f32(r, -10f, 10f, n)) {
            Int8Mm.Options o = Int8Mm.Options.dequantized(out, as, ws);
            if (withBias) {
                o = o.withBias(b);
            }
            try (Tensor got = Int8Mm.mm(a, w, o)) {
                long[] acc = Int8MmReference.accumulate(a, w);
                for (int i = 0; i < m; i++) {
                    for (int j = 0; j < n; j++) {
                        double s = (double) (float) as.getDouble(perToken ? i : 0) * (float) ws.getDouble(perToken ? j : 0);
                        double v = acc[i * n + j] * s + (withBias ? (float) b.getDouble(j) : 0.0);
                        long bits = got.getRawBits((long) i * n + j);
                        long want = out == DType.F32 ? Float.floatToRawIntBits((float) v) & 0xffffffffL
                                : (out == DType.F16 ? HalfFloats.doubleToHalf(v) : HalfFloats.doubleToBf16(v)) & 0xffffL;
                        assertEquals(want, bits, out + " [" + i + "," + j + "] of " + v);
                    }
                }
            }
        }
    }

    @Property(tries = 40)
    void kThatIsNotAMultipleOf16NamesA(@ForAll @IntRange(min = 1, max = 300) int k) {
        if (k % 16 == 0) {
            return;
        }
        Random r = new Random(k);
        try (Tensor a = i8(r, 2, k); Tensor w = i8(r, 3, k)) {
            ArgumentException e = assertThrows(ArgumentException.class, () -> Int8Mm.mm(a, w));
            assertEquals("a", e.argument());
            assertEquals(true, e.getMessage().contains("multiple of 16"), e.getMessage());
        }
    }

    @Property(tries = 30)
    void mismatchedKNamesW(@ForAll @IntRange(min = 1, max = 8) int k16, @ForAll @IntRange(min = 1, max = 8) int kw16) {
        if (k16 == kw16) {
            return;
        }
        Random r = new Random(k16 * 31L + kw16);
        try (Tensor a = i8(r, 2, 16L * k16); Tensor w = i8(r, 3, 16L * kw16)) {
            assertEquals("w", assertThrows(ArgumentException.class, () -> Int8Mm.mm(a, w)).argument());
        }
    }

    @Test void wrongDtypesScalesAndOutputsAreNamed() {
        Random r = new Random(1);
        try (Tensor a = i8(r, 4, 32); Tensor w = i8(r, 5, 32); Tensor af = Tensor.empty(Device.CPU, DType.F16, 4, 32);
             Tensor as = f32(r, 1, 2, 4); Tensor ws = f32(r, 1, 2, 5); Tensor ws3 = f32(r, 1, 2, 3); Tensor b = f32(r, 1, 2, 4);
             Tensor out = Tensor.empty(Device.CPU, DType.F16, 4, 6); Tensor outI = Tensor.empty(Device.CPU, DType.F32, 4, 5)) {
            assertEquals("a", assertThrows(ArgumentException.class, () -> Int8Mm.mm(af, w)).argument());
            assertEquals("w", assertThrows(ArgumentException.class, () -> Int8Mm.mm(a, af)).argument());
            Tensor transposed = w.strided(new long[] {5, 16}, new long[] {1, 5}, 0); // [N, K] view, not K-contiguous
            try (Tensor a16 = i8(r, 4, 16)) {
                assertEquals("w", assertThrows(ArgumentException.class, () -> Int8Mm.mm(a16, transposed)).argument());
            }
            assertEquals("aScale", assertThrows(ArgumentException.class,
                    () -> Int8Mm.mm(a, w, new Int8Mm.Options(DType.F16, null, ws, null, Backend.AUTO))).argument());
            assertEquals("wScale", assertThrows(ArgumentException.class,
                    () -> Int8Mm.mm(a, w, Int8Mm.Options.dequantized(DType.F16, as, ws3))).argument());
            assertEquals("bias", assertThrows(ArgumentException.class,
                    () -> Int8Mm.mm(a, w, Int8Mm.Options.dequantized(DType.F16, as, ws).withBias(b))).argument());
            assertEquals("aScale", assertThrows(ArgumentException.class,
                    () -> Int8Mm.mm(a, w, new Int8Mm.Options(DType.I32, as, null, null, Backend.AUTO))).argument());
            assertEquals("out", assertThrows(ArgumentException.class,
                    () -> Int8Mm.mm(a, w, Int8Mm.Options.dequantized(DType.F16, as, ws), out, null)).argument());
            assertEquals("out", assertThrows(ArgumentException.class,
                    () -> Int8Mm.mm(a, w, Int8Mm.Options.dequantized(DType.F16, as, ws), outI, null)).argument());
            assertEquals("out", assertThrows(ArgumentException.class, () -> new Int8Mm.Options(DType.I8, null, null, null, Backend.AUTO)).argument());
            assertEquals("backend", assertThrows(ArgumentException.class, () -> Int8Mm.Options.int32().withBackend(null)).argument());
        }
    }

    @Test void closedTensorsAndOverflowingKAreRejected() {
        Random r = new Random(2);
        Tensor a = i8(r, 2, 32);
        try (Tensor w = i8(r, 3, 32)) {
            a.close();
            assertEquals("a", assertThrows(ArgumentException.class, () -> Int8Mm.mm(a, w)).argument());
        }
        long k = Int8Mm.MAX_K + 16;
        try (Tensor big = Tensor.empty(Device.CPU, DType.I8, 1, k); Tensor w = Tensor.empty(Device.CPU, DType.I8, 1, k)) {
            assertEquals("a", assertThrows(ArgumentException.class, () -> Int8Mm.mm(big, w)).argument());
        }
    }

    @Test void theExtremeKHasNoOverflow() {
        // every product (-128)·(-128) at the largest K: the sum stays below 2^31
        long k = Int8Mm.MAX_K;
        byte[] v = new byte[(int) k];
        java.util.Arrays.fill(v, (byte) -128);
        try (Tensor a = Tensor.ofBytes(Device.CPU, v, 1, k); Tensor w = Tensor.ofBytes(Device.CPU, v, 1, k); Tensor out = Int8Mm.mm(a, w)) {
            assertArrayEquals(new int[] {(int) (16384L * k)}, out.toIntArray());
            assertEquals(16384L * k, (long) out.toIntArray()[0]);
        }
    }

    @Test void cpuTensorsDecideReferenceAndPlansRunIt() {
        Random r = new Random(3);
        try (Tensor a = i8(r, 3, 48); Tensor w = i8(r, 7, 48); Tensor out = Tensor.empty(Device.CPU, DType.I32, 3, 7)) {
            assertEquals(Backend.REFERENCE, Int8Mm.decide(a, w, Int8Mm.Options.int32().withBackend(Backend.CUSTOM)).backend());
            try (Int8Mm.Plan p = Int8Mm.plan(a, w, Int8Mm.Options.int32(), null)) {
                assertEquals(0, p.workspaceBytes());
                p.run(a, w, Int8Mm.Options.int32(), out);
            }
            long[] acc = Int8MmReference.accumulate(a, w);
            int[] got = out.toIntArray();
            for (int i = 0; i < acc.length; i++) {
                assertEquals(acc[i], got[i]);
            }
        }
    }

    // ------------------------------------------------------------------ every validation rule, on random problems

    private static final DType[] OUTS = {DType.I32, DType.F32, DType.F16, DType.BF16};

    /** A valid problem: a [M, K], w [N, K], out [M, N] poisoned, options; plus valid float and I32 variants of the options. */
    record Problem(long m, long n, long k, Tensor a, Tensor w, Tensor out, Int8Mm.Options o, Int8Mm.Plan plan,
                   Tensor outF, Int8Mm.Options oF, Tensor outI) {
        static Problem on(Fixture f, int m, int n, int k, DType outDt, boolean perToken, boolean withBias, Backend backend) {
            Tensor a = f.random(DType.I8, m, k);
            Tensor w = f.random(DType.I8, n, k);
            Tensor as = f.random(DType.F32, perToken ? m : 1);
            Tensor ws = f.random(DType.F32, perToken ? n : 1);
            Int8Mm.Options oF = Int8Mm.Options.dequantized(DType.F32, as, ws).withBias(withBias ? f.random(DType.F32, n) : null)
                    .withBackend(backend);
            Int8Mm.Options o = outDt == DType.I32 ? Int8Mm.Options.int32().withBackend(backend)
                    : new Int8Mm.Options(outDt, as, ws, oF.bias(), backend);
            Int8Mm.Plan plan = f.track(Int8Mm.plan(a, w, o, null));
            return new Problem(m, n, k, a, w, f.poisoned(outDt, m, n), o, plan, f.poisoned(DType.F32, m, n), oF, f.poisoned(DType.I32, m, n));
        }
    }

    /** Adds a case through every overload that can express it (an overload without out allocates it: only when out is valid). */
    private static void add(RuleCheck.Cases c, Problem p, ValidationRule r, Tensor a, Tensor w, Int8Mm.Options o, Tensor out, boolean outTargeted) {
        c.add(r, "mm(a, w, options, out, stream)", () -> Int8Mm.mm(a, w, o, out, null));
        c.add(r, "Plan.run(a, w, options, out)", () -> p.plan().run(a, w, o, out));
        if (!outTargeted) {
            c.add(r, "mm(a, w, options)", () -> RuleCheck.discard(Int8Mm.mm(a, w, o)));
            c.add(r, "decide(a, w, options)", () -> Int8Mm.decide(a, w, o));
            c.add(r, "plan(a, w, options, stream)", () -> RuleCheck.discard(Int8Mm.plan(a, w, o, null)));
            if (Int8Mm.Options.int32().equals(o)) {
                c.add(r, "mm(a, w)", () -> RuleCheck.discard(Int8Mm.mm(a, w)));
            }
        }
    }

    /** Every Int8Mm rule on {@code p}; GPU-only rules on a GPU fixture. */
    static RuleCheck.Cases cases(Fixture f, Problem p) {
        RuleCheck.Cases c = new RuleCheck.Cases();
        java.util.Random rnd = f.rnd;
        Tensor a = p.a();
        Tensor w = p.w();
        Tensor out = p.out();
        Int8Mm.Options o = p.o();
        Int8Mm.Options oF = p.oF();
        Int8Mm.Options oI = Int8Mm.Options.int32().withBackend(o.backend());
        long m = p.m();
        long n = p.n();
        long k = p.k();
        add(c, p, I8_OPTIONS_NULL, a, w, null, out, false);
        c.add(I8_OPTIONS_OUT_DTYPE, "new Options", () -> new Int8Mm.Options(rnd.nextBoolean() ? null : DType.I8, null, null, null, Backend.AUTO));
        c.add(I8_OPTIONS_BACKEND_NULL, "new Options", () -> new Int8Mm.Options(DType.I32, null, null, null, null));
        c.add(I8_OPTIONS_BACKEND_NULL, "Options.withBackend", () -> o.withBackend(null));
        add(c, p, I8_A_NULL, null, w, o, out, false);
        add(c, p, I8_W_NULL, a, null, o, out, false);
        c.add(I8_OUT_NULL, "mm(a, w, options, out, stream)", () -> Int8Mm.mm(a, w, o, null, null));
        c.add(I8_OUT_NULL, "Plan.run(a, w, options, out)", () -> p.plan().run(a, w, o, null));
        add(c, p, I8_A_CLOSED, f.closed(DType.I8, m, k), w, o, out, false);
        add(c, p, I8_W_CLOSED, a, f.closed(DType.I8, n, k), o, out, false);
        add(c, p, I8_OUT_CLOSED, a, w, o, f.closed(o.out(), m, n), true);
        DType notI8 = new DType[] {DType.F32, DType.F16, DType.BF16, DType.I32}[rnd.nextInt(4)];
        add(c, p, I8_A_DTYPE, f.random(notI8, m, k), w, o, out, false);
        add(c, p, I8_W_DTYPE, a, f.random(notI8, n, k), o, out, false);
        DType otherOut = OUTS[(java.util.Arrays.asList(OUTS).indexOf(o.out()) + 1 + rnd.nextInt(3)) % 4];
        add(c, p, I8_OUT_DTYPE, a, w, o, f.poisoned(otherOut, m, n), true);
        add(c, p, I8_A_RANK, f.random(DType.I8, rnd.nextBoolean() ? new long[] {m * k} : new long[] {1, m, k}), w, o, out, false);
        add(c, p, I8_W_RANK, a, f.random(DType.I8, rnd.nextBoolean() ? new long[] {n * k} : new long[] {1, n, k}), o, out, false);
        long kOdd = k + 1 + rnd.nextInt(15);
        add(c, p, I8_K_MULTIPLE, f.random(DType.I8, m, kOdd), f.random(DType.I8, n, kOdd), o, out, false);
        long kBig = Int8Mm.MAX_K + 16 * (1 + rnd.nextInt(4));
        Fixture big = f.fakes();
        add(c, p, I8_K_MAX, big.fake(DType.I8, m, kBig), big.fake(DType.I8, n, kBig), oI, out, false);
        add(c, p, I8_W_K, a, f.random(DType.I8, n, k + 16 * (1 + rnd.nextInt(3))), o, out, false);
        add(c, p, I8_W_DEVICE, a, f.elsewhere(DType.I8, n, k), o, out, false);
        add(c, p, I8_OUT_DEVICE, a, w, o, f.elsewhere(o.out(), m, n), true);
        c.whereStridable(I8_A_CONTIGUOUS, () -> add(c, p, I8_A_CONTIGUOUS, f.strided(DType.I8, m, k), w, o, out, false), m, k);
        c.whereStridable(I8_W_CONTIGUOUS, () -> add(c, p, I8_W_CONTIGUOUS, a, f.strided(DType.I8, n, k), o, out, false), n, k);
        c.whereStridable(I8_OUT_CONTIGUOUS, () -> add(c, p, I8_OUT_CONTIGUOUS, a, w, o, f.strided(o.out(), m, n), true), m, n);
        add(c, p, I8_OUT_SHAPE, a, w, o, f.poisoned(o.out(), rnd.nextBoolean() ? new long[] {n, m + 1} : new long[] {m, n + 1}), true);
        add(c, p, I8_A_INT32, big.fake(DType.I8, 1L << 27, 16), big.fake(DType.I8, 1, 16), oI, out, false);
        add(c, p, I8_W_INT32, big.fake(DType.I8, 1, 16), big.fake(DType.I8, 1L << 27, 16), oI, out, false);
        add(c, p, I8_OUT_INT32, big.fake(DType.I8, 1L << 16, 16), big.fake(DType.I8, 1L << 16, 16), oI, out, false);
        Tensor outI = p.outI();
        add(c, p, I8_I32_ASCALE, a, w, new Int8Mm.Options(DType.I32, oF.aScale(), null, null, o.backend()), outI, false);
        add(c, p, I8_I32_WSCALE, a, w, new Int8Mm.Options(DType.I32, null, oF.wScale(), null, o.backend()), outI, false);
        add(c, p, I8_I32_BIAS, a, w, new Int8Mm.Options(DType.I32, null, null, f.random(DType.F32, n), o.backend()), outI, false);
        Tensor outF = p.outF();
        add(c, p, I8_ASCALE_NULL, a, w, new Int8Mm.Options(DType.F32, null, oF.wScale(), oF.bias(), o.backend()), outF, false);
        add(c, p, I8_WSCALE_NULL, a, w, new Int8Mm.Options(DType.F32, oF.aScale(), null, oF.bias(), o.backend()), outF, false);
        long aLen = oF.aScale().dim(0);
        long wLen = oF.wScale().dim(0);
        ValidationRule[][] vec = {
            {I8_ASCALE_CLOSED, I8_ASCALE_DTYPE, I8_ASCALE_RANK, I8_ASCALE_LENGTH, I8_ASCALE_CONTIGUOUS, I8_ASCALE_DEVICE},
            {I8_WSCALE_CLOSED, I8_WSCALE_DTYPE, I8_WSCALE_RANK, I8_WSCALE_LENGTH, I8_WSCALE_CONTIGUOUS, I8_WSCALE_DEVICE},
            {I8_BIAS_CLOSED, I8_BIAS_DTYPE, I8_BIAS_RANK, I8_BIAS_LENGTH, I8_BIAS_CONTIGUOUS, I8_BIAS_DEVICE}};
        long[] lens = {aLen, wLen, n};
        long[] wrongLens = {aLen == 1 ? m + 1 : m + 1, wLen == 1 ? n + 1 : n + 1, rnd.nextBoolean() ? n + 1 : (n == 1 ? 2 : 1)};
        for (int v = 0; v < 3; v++) {
            long len = lens[v];
            Tensor[] bad = {f.closed(DType.F32, len), f.random(rnd.nextBoolean() ? DType.F16 : DType.I32, len), f.random(DType.F32, 1, len),
                f.random(DType.F32, wrongLens[v]), Fixture.stridable(len) ? f.strided(DType.F32, len) : null, f.elsewhere(DType.F32, len)};
            for (int i = 0; i < bad.length; i++) {
                if (i == 4 && !Fixture.stridable(len)) {
                    c.skip(vec[v][i], Fixture.ALL_ONES);
                    continue;
                }
                Tensor t = bad[i];
                Int8Mm.Options ov = v == 0 ? new Int8Mm.Options(DType.F32, t, oF.wScale(), oF.bias(), o.backend())
                        : v == 1 ? new Int8Mm.Options(DType.F32, oF.aScale(), t, oF.bias(), o.backend())
                        : new Int8Mm.Options(DType.F32, oF.aScale(), oF.wScale(), t, o.backend());
                add(c, p, vec[v][i], a, w, ov, outF, false);
            }
        }
        // device-side: alignment (real views on a GPU, fake addresses on the CPU)
        Fixture d = f.deviceSide();
        Tensor da = d.random(DType.I8, m, k);
        Tensor dw = d.random(DType.I8, n, k);
        Tensor dout = d.poisoned(DType.I32, m, n);
        add(c, p, I8_A_ALIGN, d.misaligned(DType.I8, 16, m, k), dw, oI, dout, false);
        add(c, p, I8_W_ALIGN, da, d.misaligned(DType.I8, 16, n, k), oI, dout, false);
        add(c, p, I8_OUT_ALIGN, da, dw, oI, d.misaligned(DType.I32, 16, m, n), true);
        // device-side: out overlapping an input (one allocation; out 16-byte aligned inside it)
        Tensor das = d.random(DType.F32, m);
        Tensor dws = d.random(DType.F32, n);
        Tensor dbias = d.random(DType.F32, n);
        long[] outShape = {m, n};
        Tensor[] oa = d.overlappingBytes(DType.I8, new long[] {m, k}, DType.F32, outShape, d.shiftWithin(m * k, 16));
        add(c, p, I8_OUT_OVERLAP, oa[0], dw, Int8Mm.Options.dequantized(DType.F32, das, dws), oa[1], true);
        Tensor[] ow = d.overlappingBytes(DType.I8, new long[] {n, k}, DType.I32, outShape, d.shiftWithin(n * k, 16));
        add(c, p, I8_OUT_OVERLAP, da, ow[0], oI, ow[1], true);
        Tensor[] oas = d.overlappingBytes(DType.F32, new long[] {m}, DType.F32, outShape, d.shiftWithin(4 * m, 16));
        add(c, p, I8_OUT_OVERLAP, da, dw, Int8Mm.Options.dequantized(DType.F32, oas[0], dws), oas[1], true);
        Tensor[] ows = d.overlappingBytes(DType.F32, new long[] {n}, DType.F32, outShape, d.shiftWithin(4 * n, 16));
        add(c, p, I8_OUT_OVERLAP, da, dw, Int8Mm.Options.dequantized(DType.F32, das, ows[0]), ows[1], true);
        Tensor[] obias = d.overlappingBytes(DType.F32, new long[] {n}, DType.F32, outShape, d.shiftWithin(4 * n, 16));
        add(c, p, I8_OUT_OVERLAP, da, dw, Int8Mm.Options.dequantized(DType.F32, das, dws).withBias(obias[0]), obias[1], true);
        // a plan run with options of another output dtype: the options are at fault, not a
        boolean plannedI32 = o.out() == DType.I32;
        Int8Mm.Options otherDtype = plannedI32 ? oF : oI;
        Tensor otherDtypeOut = plannedI32 ? p.outF() : p.outI();
        c.add(I8_PLAN_OUT_DTYPE, "Plan.run(a, w, options, out)", () -> p.plan().run(a, w, otherDtype, otherDtypeOut));
        if (f.gpu()) {
            // the vendor dequantization pass: M·N = 2^31-2 (F16 out, 4 GiB) plus any grid stride wraps its int index
            long mBig = 2L * 3 * 3 * 7 * 11;       // 1386 (M > 64: the vendor path under AUTO)
            long nBig = 31L * 151 * 331;           // 1549411; M·N = 2^31-2
            Tensor ab = f.random(DType.I8, mBig, 16);
            Tensor wb = f.random(DType.I8, nBig, 16);
            Tensor ob16 = f.empty(DType.F16, mBig, nBig);
            Int8Mm.Options deq = Int8Mm.Options.dequantized(DType.F16, f.random(DType.F32, 1), f.random(DType.F32, 1));
            c.add(I8_DEQUANT_INT32, "mm(a, w, options, out, stream)", () -> Int8Mm.mm(ab, wb, deq, ob16, null));
            c.add(I8_DEQUANT_INT32, "plan(a, w, options, stream)", () -> RuleCheck.discard(Int8Mm.plan(ab, wb, deq, null)));
            c.add(I8_DEQUANT_INT32, "mm(a, w, options, out, stream)", () -> Int8Mm.mm(ab, wb, deq.withBackend(Backend.VENDOR), ob16, null));
            // refused before the 4 GiB output is allocated, and decide refuses what mm refuses
            c.add(I8_DEQUANT_INT32, "mm(a, w, options)", () -> RuleCheck.discard(Int8Mm.mm(ab, wb, deq)));
            c.add(I8_DEQUANT_INT32, "decide(a, w, options)", () -> Int8Mm.decide(ab, wb, deq));
        }
        Tensor a2 = f.random(DType.I8, m + 1, k);
        Tensor out2 = f.poisoned(o.out(), m + 1, n);
        Int8Mm.Options o2 = o.out() == DType.I32 || o.aScale().dim(0) == 1 ? o
                : new Int8Mm.Options(o.out(), f.random(DType.F32, m + 1), o.wScale(), o.bias(), o.backend());
        c.add(I8_PLAN_MISMATCH, "Plan.run(a, w, options, out)", () -> p.plan().run(a2, w, o2, out2));
        Int8Mm.Plan closed = Int8Mm.plan(a, w, o, null);
        closed.close();
        c.add(I8_PLAN_CLOSED, "Plan.run(a, w, options, out)", () -> closed.run(a, w, o, out));
        if (f.gpu()) {
            long mBig = Int8MmHeuristics.CUSTOM_MAX_M + 1 + rnd.nextInt(64);
            Tensor ab = f.random(DType.I8, mBig, k);
            Tensor ob = f.poisoned(DType.I32, mBig, n);
            Int8Mm.Options custom = Int8Mm.Options.int32().withBackend(Backend.CUSTOM);
            c.add(I8_CUSTOM_UNSUPPORTED, "mm(a, w, options, out, stream)", () -> Int8Mm.mm(ab, w, custom, ob, null));
            c.add(I8_CUSTOM_UNSUPPORTED, "mm(a, w, options)", () -> RuleCheck.discard(Int8Mm.mm(ab, w, custom)));
            c.add(I8_CUSTOM_UNSUPPORTED, "decide(a, w, options)", () -> Int8Mm.decide(ab, w, custom));
            c.add(I8_CUSTOM_UNSUPPORTED, "plan(a, w, options, stream)", () -> RuleCheck.discard(Int8Mm.plan(ab, w, custom, null)));
            Int8Mm.Options ref = o.withBackend(Backend.REFERENCE);
            c.add(I8_BACKEND_REFERENCE, "mm(a, w, options, out, stream)", () -> Int8Mm.mm(a, w, ref, out, null));
            c.add(I8_BACKEND_REFERENCE, "mm(a, w, options)", () -> RuleCheck.discard(Int8Mm.mm(a, w, ref)));
            c.add(I8_BACKEND_REFERENCE, "decide(a, w, options)", () -> Int8Mm.decide(a, w, ref));
            c.add(I8_BACKEND_REFERENCE, "plan(a, w, options, stream)", () -> RuleCheck.discard(Int8Mm.plan(a, w, ref, null)));
            RuleCheck.streamCases(c, f, I8_STREAM_CLOSED, I8_STREAM_DEVICE, java.util.Map.of(
                    "mm(a, w, options, out, stream)", st -> () -> Int8Mm.mm(a, w, o, out, st),
                    "plan(a, w, options, stream)", st -> () -> RuleCheck.discard(Int8Mm.plan(a, w, o, st))));
        }
        return c;
    }

    @Property(tries = 25)
    @Covers({I8_OPTIONS_NULL, I8_OPTIONS_OUT_DTYPE, I8_OPTIONS_BACKEND_NULL, I8_A_NULL, I8_W_NULL, I8_OUT_NULL, I8_A_CLOSED, I8_W_CLOSED,
            I8_OUT_CLOSED, I8_A_DTYPE, I8_W_DTYPE, I8_OUT_DTYPE, I8_A_RANK, I8_W_RANK, I8_K_MULTIPLE, I8_K_MAX, I8_W_K, I8_W_DEVICE,
            I8_OUT_DEVICE, I8_A_CONTIGUOUS, I8_W_CONTIGUOUS, I8_OUT_CONTIGUOUS, I8_OUT_SHAPE, I8_A_INT32, I8_W_INT32, I8_OUT_INT32,
            I8_I32_ASCALE, I8_I32_WSCALE, I8_I32_BIAS, I8_ASCALE_NULL, I8_WSCALE_NULL, I8_ASCALE_CLOSED, I8_WSCALE_CLOSED, I8_BIAS_CLOSED,
            I8_ASCALE_DTYPE, I8_WSCALE_DTYPE, I8_BIAS_DTYPE, I8_ASCALE_RANK, I8_WSCALE_RANK, I8_BIAS_RANK, I8_ASCALE_LENGTH,
            I8_WSCALE_LENGTH, I8_BIAS_LENGTH, I8_ASCALE_CONTIGUOUS, I8_WSCALE_CONTIGUOUS, I8_BIAS_CONTIGUOUS, I8_ASCALE_DEVICE,
            I8_WSCALE_DEVICE, I8_BIAS_DEVICE, I8_A_ALIGN, I8_W_ALIGN, I8_OUT_ALIGN, I8_OUT_OVERLAP, I8_PLAN_MISMATCH, I8_PLAN_OUT_DTYPE,
            I8_PLAN_CLOSED})
    void everyRuleIsEnforcedBeforeAnyWork(@ForAll @IntRange(min = 1, max = 9) int m, @ForAll @IntRange(min = 1, max = 12) int n,
                                          @ForAll @IntRange(min = 1, max = 4) int k16, @ForAll @IntRange(min = 0, max = 3) int outi,
                                          @ForAll boolean perToken, @ForAll boolean withBias, @ForAll long seed) {
        try (Fixture f = new Fixture(Device.CPU, seed)) {
            Problem p = Problem.on(f, m, n, 16 * k16, OUTS[outi], perToken, withBias, Backend.AUTO);
            RuleCheck.run(f, cases(f, p), () -> Int8Mm.mm(p.a(), p.w(), p.o(), p.out(), null), p.out(), p.outF(), p.outI());
        }
    }
}
