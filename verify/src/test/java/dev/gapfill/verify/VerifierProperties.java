package dev.gapfill.verify;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.verify.arbitraries.ElementwiseProblem;
import dev.gapfill.verify.arbitraries.GapfillArbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The verifier itself: it must catch wrong, unwritten and NaN elements, and pass exact ones. */
class VerifierProperties {
    @Provide Arbitrary<ElementwiseProblem> problems() {
        return GapfillArbitraries.elementwise(3000);
    }

    @Property(tries = 60) void cpuBackendPassesItsOwnPolicy(@ForAll("problems") ElementwiseProblem p) {
        Verdict v = p.check(Device.CPU);
        assertTrue(v.pass(), v.toString());
    }

    @Test void detectsAOneUlpErrorUnderBitExact() {
        try (Tensor t = Tensor.of(Device.CPU, DType.F16, new float[] {1f, 2f, 3f}, 3)) {
            double[] ref = {1.0, 2.0, 3.0};
            assertTrue(Verifier.compare(t, ref, null, Tolerance.bitExact(), "ref").bitExact());
            t.setRawBits(1, t.getRawBits(1) + 1); // one ulp up
            Verdict v = Verifier.compare(t, ref, null, Tolerance.bitExact(), "ref");
            assertFalse(v.pass());
            assertEquals(1, v.maxUlp());
            assertEquals(1, v.failures());
            assertTrue(Verifier.compare(t, ref, null, Tolerance.ulps(1), "ref").pass());
        }
    }

    @Property(tries = 100)
    void everyDtypeMatchesItsOwnValuesOnContiguousTensorsAndViews(@ForAll @net.jqwik.api.constraints.IntRange(min = 0, max = 4) int dtype,
                                                                   @ForAll @net.jqwik.api.constraints.IntRange(min = 1, max = 40) int n,
                                                                   @ForAll long seed) {
        // The verifier reads an output's raw bits once and takes its values from them: they must be the tensor's own
        // values (getDouble), bit for bit, in every dtype, on a contiguous tensor and on a strided view; one changed
        // element fails.
        DType dt = new DType[] {DType.F32, DType.F16, DType.BF16, DType.I8, DType.I32}[dtype];
        java.util.Random rnd = new java.util.Random(seed);
        try (Tensor t = Tensor.empty(Device.CPU, dt, 2L * n)) {
            for (int i = 0; i < 2 * n; i++) {
                t.setRawBits(i, dt.bytes() == 1 ? rnd.nextInt(256) : dt.bytes() == 2 ? rnd.nextInt(0x7c00) : rnd.nextInt() & 0x7f7fffff);
            }
            Tensor every2nd = t.strided(new long[] {n}, new long[] {2}, 1);
            for (Tensor x : new Tensor[] {t, every2nd}) {
                double[] ref = new double[(int) x.numel()];
                for (int i = 0; i < ref.length; i++) {
                    ref[i] = x.getDouble(i);
                }
                Verdict v = Verifier.compare(x, ref, null, Tolerance.bitExact(), "own values");
                assertTrue(v.pass() && v.bitExact(), dt + " " + v);
                ref[ref.length - 1] += dt.isFloating() ? Math.max(1.0, Math.abs(ref[ref.length - 1])) : 1;
                assertFalse(Verifier.compare(x, ref, null, Tolerance.bitExact(), "changed").pass(), dt.toString());
            }
        }
    }

    @Test void poisonIsNeverAccepted() {
        try (Tensor t = Tensor.of(Device.CPU, DType.F32, new float[] {1f, 2f}, 2)) {
            t.setRawBits(0, 0xffffffffL); // NaN: an element the kernel never wrote
            Verdict v = Verifier.compare(t, new double[] {1, 2}, new double[] {1e30, 1e30}, Tolerance.accumulation(DType.F32, 1 << 20, 2), "ref");
            assertFalse(v.pass(), v.toString());
        }
    }

    @Test void ulpRuleAcceptsANanResultOnlyAgainstANanReference() {
        // NaN encodings sit next to ±inf on the ordered line: 1 ulp from the rounded reference, but not a number
        try (Tensor t = Tensor.of(Device.CPU, DType.F32, new float[] {0f, 0f}, 2)) {
            t.setRawBits(0, 0x7f800001L);                 // a signalling-NaN pattern
            t.setRawBits(1, 0xff800001L);                 // its negative twin
            Verdict v = Verifier.compare(t, new double[] {1e39, -1e39}, null, Tolerance.ulps(1), "ref"); // both round to ±inf in F32
            assertFalse(v.pass(), v.toString());
            assertEquals(2, v.failures());
            assertEquals(Double.POSITIVE_INFINITY, v.maxRelErr());
            assertTrue(Verifier.compare(t, new double[] {Double.NaN, Double.NaN}, null, Tolerance.ulps(1), "ref").pass(),
                    "NaN against a NaN reference is identical");
        }
        try (Tensor h = Tensor.of(Device.CPU, DType.F16, new float[] {0f, 0f}, 2)) {
            h.setRawBits(0, 0x7c01L);
            h.setRawBits(1, 0xfc01L);
            assertFalse(Verifier.compare(h, new double[] {70000, -70000}, null, Tolerance.ulps(1), "ref").pass(), "F16 NaN next to inf");
            assertFalse(Verifier.compare(h, new double[] {70000, -70000}, null, Tolerance.ulps(1000), "ref").pass());
        }
        try (Tensor b = Tensor.of(Device.CPU, DType.BF16, new float[] {0f}, 1)) {
            b.setRawBits(0, 0x7f81L);
            assertFalse(Verifier.compare(b, new double[] {1e39}, null, Tolerance.ulps(1), "ref").pass(), "BF16 NaN next to inf");
        }
        try (Tensor t = Tensor.of(Device.CPU, DType.F32, new float[] {Float.POSITIVE_INFINITY}, 1)) {
            // a number next to a NaN reference fails too; the overflow the rounded reference also gives still passes
            assertFalse(Verifier.compare(t, new double[] {Double.NaN}, null, Tolerance.ulps(Tolerance.MAX_ULPS), "ref").pass());
            assertTrue(Verifier.compare(t, new double[] {1e39}, null, Tolerance.ulps(1), "ref").pass());
        }
    }

    @Test void ulpRuleRefusesAnOverflowNextToTheLargestFiniteReference() {
        // +inf sits one step past the largest finite value on the ordered line: one "ulp" from 65504 in F16 and from
        // Float.MAX_VALUE in F32, yet an overflow of a finite result, never within an ulp rule
        try (Tensor h = Tensor.of(Device.CPU, DType.F16, new float[] {Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY}, 2)) {
            Verdict v = Verifier.compare(h, new double[] {65504, -65504}, null, Tolerance.ulps(1), "ref");
            assertFalse(v.pass(), v.toString());
            assertEquals(2, v.failures());
        }
        try (Tensor t = Tensor.of(Device.CPU, DType.F32, new float[] {Float.POSITIVE_INFINITY, Float.MAX_VALUE}, 2)) {
            Verdict v = Verifier.compare(t, new double[] {Float.MAX_VALUE, Float.MAX_VALUE}, null, Tolerance.ulps(1), "ref");
            assertEquals(1, v.failures(), v.toString());
            assertTrue(v.firstFailure().startsWith("element 0"), "the overflowed element: " + v.firstFailure());
        }
        try (Tensor h = Tensor.of(Device.CPU, DType.F16, new float[] {65504f}, 1)) {
            // and the other direction: the largest finite value where the reference rounds to +inf (70000 in F16)
            assertFalse(Verifier.compare(h, new double[] {70000}, null, Tolerance.ulps(1), "ref").pass());
        }
    }

    @Test void comparingTwoResultsUnderAnAccumulationBoundIsRefused() {
        try (Tensor a = Tensor.of(Device.CPU, DType.F32, new float[] {3e-7f}, 1); Tensor b = Tensor.of(Device.CPU, DType.F32, new float[] {-2e-7f}, 1)) {
            dev.gapfill.core.ArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(dev.gapfill.core.ArgumentException.class,
                    () -> Verifier.compare(a, b, Tolerance.accumulation(DType.F32, 64, 2), "vendor"));
            assertTrue(e.getMessage().contains("tol"), e.getMessage());
            try (Tensor c = Tensor.of(Device.CPU, DType.F32, new float[] {3e-7f}, 1)) {  // an equal result in its own memory passes
                assertTrue(Verifier.compare(a, c, Tolerance.bitExact(), "copy").pass());
            }
        }
    }

    @Test void maxRelErrIsInfiniteForAnInfiniteResultOfAFiniteReference() {
        try (Tensor t = Tensor.of(Device.CPU, DType.F32, new float[] {Float.POSITIVE_INFINITY, 2f}, 2)) {
            Verdict v = Verifier.compare(t, new double[] {1, 2}, null, Tolerance.bitExact(), "ref");
            assertFalse(v.pass());
            assertEquals(Double.POSITIVE_INFINITY, v.maxRelErr(), v.toString());
            // the correctly rounded overflow (reference 1e39 > max float) is identical: no relative error is recorded
            Verdict rounded = Verifier.compare(t, new double[] {1e39, 2}, null, Tolerance.bitExact(), "ref");
            assertTrue(rounded.pass() && rounded.bitExact(), rounded.toString());
            assertEquals(0.0, rounded.maxRelErr());
        }
        try (Tensor h = Tensor.of(Device.CPU, DType.F16, new float[] {Float.NEGATIVE_INFINITY}, 1)) {
            Verdict v = Verifier.compare(h, new double[] {-1}, new double[] {1}, Tolerance.accumulation(DType.F16, 8, 2), "ref");
            assertFalse(v.pass());
            assertEquals(Double.POSITIVE_INFINITY, v.maxRelErr(), v.toString());
        }
    }

    @Test void unwrittenI32FailsEvenWhereTheReferenceIsMinusOne() {
        // -1 is a legal int8Mm result (and 0xFF bytes would read as -1): the poison must be a value no result reaches
        try (Tensor out = Poison.poisoned(Device.CPU, DType.I32, 4)) {
            Verdict v = Verifier.compare(out, new double[] {-1, -1, 0, -2_130_446_336.0}, null, Tolerance.bitExact(), "ref");
            assertEquals(4, v.failures(), v.toString());
            // below the most negative int8Mm sum: -128·127 per term over Int8Mm.MAX_K terms
            assertTrue(out.getDouble(0) < -128.0 * 127 * dev.gapfill.ops.Int8Mm.MAX_K, "poison " + out.getDouble(0));
        }
        try (Tensor f = Poison.poisoned(Device.CPU, DType.F16, 3)) {
            for (int i = 0; i < 3; i++) {
                assertTrue(Double.isNaN(f.getDouble(i)), "floats stay NaN-poisoned");
            }
        }
    }

    @Test void accumulationBoundScalesWithTheTermsNotTheResult() {
        // exact = 1e-3 from terms of magnitude 1: an fp32 sum may be off by ~k*u*1, far more than u*|exact|
        try (Tensor t = Tensor.of(Device.CPU, DType.F32, new float[] {1e-3f + 4e-7f}, 1)) {
            Tolerance tol = Tolerance.accumulation(DType.F32, 64, 1);
            assertTrue(Verifier.compare(t, new double[] {1e-3}, new double[] {64.0}, tol, "ref").pass());
            assertFalse(Verifier.compare(t, new double[] {1e-3}, new double[] {0.001}, tol, "ref").pass());
        }
    }

    @Property(tries = 200) void ulpDistanceIsSymmetricAndZeroOnlyForEqualBits(@ForAll short a, @ForAll short b) {
        long d1 = Verifier.ulpDistance(DType.F16, a & 0xffff, b & 0xffff);
        long d2 = Verifier.ulpDistance(DType.F16, b & 0xffff, a & 0xffff);
        assertEquals(d1, d2);
        if (a == b) {
            assertEquals(0, d1);
        }
    }

    @Test void largeIntegersStayExact() {
        try (Tensor t = Tensor.ofInts(Device.CPU, new int[] {16_777_217, -2_000_000_001}, 2);
             Tensor u = Tensor.ofInts(Device.CPU, new int[] {16_777_216, -2_000_000_001}, 2)) {
            Verdict v = Verifier.compare(t, u, Tolerance.bitExact(), "vendor");
            assertFalse(v.pass(), "2^24 + 1 differs from 2^24: " + v);
            assertEquals(1, v.maxUlp());
        }
    }

    /** Above one chunk (65,536 elements) the comparison runs in parallel chunks; the verdict must read as a serial scan's. */
    private static final int LARGE = 300_000;

    /** 1, 2, ..., 1000, 1, 2, ...: exact in F16 and F32, never zero. */
    private static float[] cycle(int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = 1 + i % 1000;
        }
        return v;
    }

    private static double[] widen(float[] v) {
        double[] d = new double[v.length];
        for (int i = 0; i < v.length; i++) {
            d[i] = v[i];
        }
        return d;
    }

    @Test void largeF16VerdictCountsEveryChunkAndNamesTheLowestFailure() {
        float[] v = cycle(LARGE);
        double[] ref = widen(v);
        try (Tensor t = Tensor.of(Device.CPU, DType.F16, v, 600, 500)) {
            Verdict clean = Verifier.compare(t, ref, null, Tolerance.bitExact(), "ref");
            assertTrue(clean.pass() && clean.bitExact(), clean.toString());
            assertEquals(LARGE, clean.identical(), "each element counted once across chunk boundaries");
            assertEquals(0, clean.maxUlp());
            assertEquals(0.0, clean.maxRelErr());
            assertNull(clean.firstFailure());

            // in chunks 4, 2 and 1 (none in chunk 0); the lowest is not the largest error
            t.setRawBits(299_999, t.getRawBits(299_999) + 2); // 1000 -> 1001 (ulp 0.5 in [512, 1024))
            t.setRawBits(140_000, t.getRawBits(140_000) + 3); // 1 -> 1 + 3/1024
            t.setRawBits(65_537, t.getRawBits(65_537) + 1);   // 538 -> 538.5

            Verdict exact = Verifier.compare(t, ref, null, Tolerance.bitExact(), "ref");
            assertFalse(exact.pass());
            assertFalse(exact.bitExact());
            assertEquals(3, exact.failures());
            assertEquals(LARGE - 3, exact.identical());
            assertEquals(3, exact.maxUlp());
            assertEquals(3.0 / 1024, exact.maxRelErr());
            assertEquals("element 65537[131, 37]: got 538.5, expected 538.0", exact.firstFailure());

            // the lower differing elements pass within 2 ulps: the first failure is the lowest FAILING index
            Verdict twoUlps = Verifier.compare(t, ref, null, Tolerance.ulps(2), "ref");
            assertEquals(1, twoUlps.failures());
            assertEquals(LARGE - 3, twoUlps.identical());
            assertEquals("element 140000[280, 0]: got 1.0029296875, expected 1.0", twoUlps.firstFailure());

            Verdict oneUlp = Verifier.compare(t, ref, null, Tolerance.ulps(1), "ref");
            assertEquals(2, oneUlp.failures());
            assertEquals("element 140000[280, 0]: got 1.0029296875, expected 1.0", oneUlp.firstFailure());
        }
    }

    @Test void largeF32AccumulationVerdictKeepsTheNanRuleAcrossChunks() {
        float[] v = cycle(LARGE);
        double[] ref = widen(v);
        double[] scale = widen(v);
        Tolerance tol = Tolerance.accumulation(DType.F32, 1024, 1); // bound ~ 6.1e-5 * |ref| here
        try (Tensor t = Tensor.of(Device.CPU, DType.F32, v, LARGE)) {
            t.setRawBits(250_000, Float.floatToRawIntBits(Float.NaN)); // ref 1: a NaN result fails, max rel err +inf
            t.setRawBits(200_000, Float.floatToRawIntBits(Float.NaN)); // NaN against a NaN reference: identical
            ref[200_000] = Double.NaN;
            t.setDouble(131_072, 73 + 1.0 / 64);  // first element of chunk 2; 0.0156 > bound 0.0045: fails
            t.setDouble(70_100, 101 + 1.0 / 512); // 0.0020 < bound 0.0062: passes, not identical

            Verdict v1 = Verifier.compare(t, ref, scale, tol, "ref");
            assertFalse(v1.pass());
            assertEquals(2, v1.failures());
            assertEquals(LARGE - 3, v1.identical());
            assertEquals(Double.POSITIVE_INFINITY, v1.maxRelErr());
            assertEquals(Float.floatToRawIntBits(Float.NaN) - Float.floatToRawIntBits(1f), v1.maxUlp());
            assertEquals("element 131072[131072]: got 73.015625, expected 73.0 (scale 73.0)", v1.firstFailure());

            t.setDouble(250_000, 1); // without the NaN result the largest relative error is finite again
            Verdict v2 = Verifier.compare(t, ref, scale, tol, "ref");
            assertEquals(1, v2.failures());
            assertEquals(LARGE - 2, v2.identical());
            assertEquals((1.0 / 64) / 73, v2.maxRelErr());
            assertEquals(2048, v2.maxUlp()); // 2^-6 in units of 2^-17, the F32 ulp in [64, 128)
            assertEquals("element 131072[131072]: got 73.015625, expected 73.0 (scale 73.0)", v2.firstFailure());
        }
    }
}
