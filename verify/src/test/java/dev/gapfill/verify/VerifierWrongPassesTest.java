package dev.gapfill.verify;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The verifier never reports a wrong pass. Arguments that would make a comparison vacuous are refused before anything
 * is compared, naming the argument; reference values that the output dtype cannot hold match no result. Each test but
 * the last passed a wrong result (or failed without naming the argument) before these rules; the last keeps the
 * comparisons that are right passing.
 */
class VerifierWrongPassesTest {
    private static final double INF = Double.POSITIVE_INFINITY;

    private static ArgumentException refused(Executable call) {
        return assertThrows(ArgumentException.class, call);
    }

    private static String argumentOf(Executable call) {
        return refused(call).argument();
    }

    @Test void nullArgumentsAreRefusedByName() {
        try (Tensor t = Tensor.of(Device.CPU, DType.F32, new float[] {1f, 2f}, 2);
             Tensor u = Tensor.of(Device.CPU, DType.F32, new float[] {1f, 2f}, 2)) {
            double[] ref = {1, 2};
            assertEquals("actual", argumentOf(() -> Verifier.compare(null, ref, null, Tolerance.bitExact(), "ref")));
            assertEquals("reference", argumentOf(() -> Verifier.compare(t, null, null, Tolerance.bitExact(), "ref")));
            assertEquals("tol", argumentOf(() -> Verifier.compare(t, ref, null, null, "ref")));
            assertEquals("scale", argumentOf(() -> Verifier.compare(t, ref, null, Tolerance.accumulation(DType.F32, 8, 1), "ref")));
            assertEquals("actual", argumentOf(() -> Verifier.compare(null, u, Tolerance.bitExact(), "vendor")));
            assertEquals("expected", argumentOf(() -> Verifier.compare(t, (Tensor) null, Tolerance.bitExact(), "vendor")));
            assertEquals("tol", argumentOf(() -> Verifier.compare(t, u, null, "vendor")));
        }
        Tensor closed = Tensor.of(Device.CPU, DType.F32, new float[] {1f}, 1);
        closed.close();
        assertEquals("actual", argumentOf(() -> Verifier.compare(closed, new double[] {1}, null, Tolerance.bitExact(), "ref")));
    }

    @Test void aScaleThatCannotBoundAnElementIsRefused() {
        // 1000 for a reference of 1: far outside any accumulation bound of a finite scale
        try (Tensor t = Tensor.of(Device.CPU, DType.F32, new float[] {1000f, 2f}, 2)) {
            double[] ref = {1, 2};
            Tolerance tol = Tolerance.accumulation(DType.F32, 8, 1);
            assertFalse(Verifier.compare(t, ref, new double[] {1, 2}, tol, "ref").pass());

            ArgumentException infinite = refused(() -> Verifier.compare(t, ref, new double[] {INF, 2}, tol, "ref"));
            assertEquals("scale", infinite.argument());
            assertTrue(infinite.received().startsWith("scale[0] = Infinity"), infinite.getMessage());
            ArgumentException negative = refused(() -> Verifier.compare(t, ref, new double[] {1, -1}, tol, "ref"));
            assertTrue(negative.received().startsWith("scale[1] = -1.0"), negative.getMessage());
            ArgumentException nan = refused(() -> Verifier.compare(t, ref, new double[] {1, Double.NaN}, tol, "ref"));
            assertTrue(nan.received().startsWith("scale[1] = NaN"), nan.getMessage());
            // the first bad entry is named
            assertTrue(refused(() -> Verifier.compare(t, ref, new double[] {-INF, INF}, tol, "ref")).received()
                    .startsWith("scale[0] = -Infinity"));

            // one entry per element: a longer scale was taken silently, a shorter one threw an index error mid-compare
            assertEquals("scale", argumentOf(() -> Verifier.compare(t, ref, new double[] {INF, INF, 1}, tol, "ref")));
            assertEquals("scale", argumentOf(() -> Verifier.compare(t, ref, new double[] {1}, tol, "ref")));
            // also where the rule does not use it: a scale passed is one magnitude per element
            assertEquals("scale", argumentOf(() -> Verifier.compare(t, ref, new double[] {1, -1}, Tolerance.ulps(1), "ref")));
        }
        // where the reference is NaN or infinite the bound takes no part (its own bits pass, nothing else): the Σ|terms|
        // of such an element may be NaN or +inf (a softmax row with a +inf logit), though never negative
        try (Tensor w = Tensor.of(Device.CPU, DType.F32, new float[] {Float.NaN, 0.75f, Float.POSITIVE_INFINITY}, 3)) {
            Tolerance tol = Tolerance.accumulation(DType.F32, 8, 2);
            double[] ref = {Double.NaN, 0.75, INF};
            Verdict v = Verifier.compare(w, ref, new double[] {Double.NaN, 0.75, INF}, tol, "ref");
            assertTrue(v.pass() && v.bitExact(), v.toString());
            w.setDouble(0, 0.5);
            w.setDouble(2, Float.MAX_VALUE);
            assertEquals(2, Verifier.compare(w, ref, new double[] {Double.NaN, 0.75, INF}, tol, "ref").failures());
            assertEquals("scale", argumentOf(() -> Verifier.compare(w, ref, new double[] {-1, 0.75, INF}, tol, "ref")));
            assertEquals("scale", argumentOf(() -> Verifier.compare(w, ref, new double[] {0, 0.75, -INF}, tol, "ref")));
        }
    }

    @Test void anInfiniteReferenceUnderAnAccumulationBoundPassesOnlyItsOwnInfinity() {
        Tolerance tol = Tolerance.accumulation(DType.F32, 8, 1);
        // |1 − ∞| ≤ u·∞ + ...: the bound is infinite where the reference is, so finite results used to pass
        try (Tensor t = Tensor.of(Device.CPU, DType.F32, new float[] {1f, Float.MAX_VALUE, Float.NEGATIVE_INFINITY, Float.NaN}, 4)) {
            Verdict v = Verifier.compare(t, new double[] {INF, INF, INF, INF}, new double[] {1, 1, 1, 1}, tol, "ref");
            assertFalse(v.pass(), v.toString());
            assertEquals(4, v.failures(), v.toString());
            assertEquals(0, v.identical());
            assertEquals(INF, v.maxRelErr());
            assertTrue(v.firstFailure().startsWith("element 0"), v.firstFailure());
        }
        try (Tensor h = Tensor.of(Device.CPU, DType.F16, new float[] {-65504f, 0f}, 2)) {
            Verdict v = Verifier.compare(h, new double[] {-INF, -INF}, new double[] {0, 0}, Tolerance.accumulation(DType.F16, 8, 2), "ref");
            assertEquals(2, v.failures(), v.toString());
        }
        try (Tensor t = Tensor.of(Device.CPU, DType.F32, new float[] {0f, Float.NaN}, 2)) {
            // a NaN reference passes a NaN result (identical) and nothing else
            Verdict v = Verifier.compare(t, new double[] {Double.NaN, Double.NaN}, new double[] {1, 1}, tol, "ref");
            assertEquals(1, v.failures(), v.toString());
            assertEquals(1, v.identical());
            assertTrue(v.firstFailure().startsWith("element 0"), v.firstFailure());
        }
    }

    @Test void anIntegerReferenceTheDtypeCannotHoldMatchesNothing() {
        // each result is what a round-and-cast makes of its reference: the encoding that used to "match" it
        double[] i32Refs = {Double.NaN, INF, -INF, 2.5, -2.5, 0.1, 1e10, 2147483648.0, -2147483649.0, 0x1p40 + 5};
        int[] i32Got = new int[i32Refs.length];
        for (int i = 0; i < i32Refs.length; i++) {
            i32Got[i] = (int) Math.round(i32Refs[i]);
        }
        try (Tensor t = Tensor.ofInts(Device.CPU, i32Got, i32Got.length)) {
            for (Tolerance tol : new Tolerance[] {Tolerance.bitExact(), Tolerance.ulps(1), Tolerance.ulps(1000)}) {
                Verdict v = Verifier.compare(t, i32Refs, null, tol, "ref");
                assertFalse(v.pass(), tol + ": " + v);
                assertEquals(i32Refs.length, v.failures(), tol + ": " + v);
                assertEquals(0, v.identical());
                assertFalse(v.bitExact());
                assertEquals(INF, v.maxRelErr());
                assertEquals(Long.MAX_VALUE, v.maxUlp(), "a NaN reference is no finite distance away");
            }
        }
        double[] i8Refs = {Double.NaN, INF, -INF, 128, -129, 256, 0.5, -0.5, 127.5};
        byte[] i8Got = new byte[i8Refs.length];
        for (int i = 0; i < i8Refs.length; i++) {
            i8Got[i] = (byte) Math.round(i8Refs[i]);
        }
        try (Tensor b = Tensor.ofBytes(Device.CPU, i8Got, i8Got.length)) {
            for (Tolerance tol : new Tolerance[] {Tolerance.bitExact(), Tolerance.ulps(1)}) {
                Verdict v = Verifier.compare(b, i8Refs, null, tol, "ref");
                assertEquals(i8Refs.length, v.failures(), tol + ": " + v);
                assertEquals(0, v.identical());
            }
        }
        try (Tensor t = Tensor.ofInts(Device.CPU, new int[] {3, 0}, 2)) {
            // nor does an accumulation rule let the rounded fraction through as identical
            Verdict v = Verifier.compare(t, new double[] {2.5, 0}, new double[] {1, 1}, Tolerance.accumulation(DType.I32, 8, 1), "ref");
            assertEquals(1, v.failures(), v.toString());
            assertEquals(1, v.identical());
        }
    }

    @Test void moreElementsThanAnIntCountIsRefusedNotTruncated() {
        try (Tensor one = Tensor.of(Device.CPU, DType.F32, new float[] {7f}, 1);
             Tensor other = Tensor.of(Device.CPU, DType.F32, new float[] {7f}, 1)) {
            // 2^32 + 1 elements, all the one stored value (stride 0): an int count of 1 compared one element and passed
            Tensor wide = one.strided(new long[] {(1L << 32) + 1}, new long[] {0}, 0);
            assertEquals("actual", argumentOf(() -> Verifier.compare(wide, new double[] {7}, null, Tolerance.bitExact(), "ref")));
            Tensor negativeCount = one.strided(new long[] {1L << 31}, new long[] {0}, 0);  // an int count of -2^31
            assertEquals("actual", argumentOf(() -> Verifier.compare(negativeCount, new double[] {7}, null, Tolerance.bitExact(), "ref")));
            Tensor otherWide = other.strided(new long[] {(1L << 32) + 1}, new long[] {0}, 0);
            assertEquals("actual", argumentOf(() -> Verifier.compare(wide, otherWide, Tolerance.bitExact(), "vendor")));
            // the largest count an int holds is compared as usual (up to the reference's length check)
            Tensor widest = one.strided(new long[] {Integer.MAX_VALUE}, new long[] {0}, 0);
            assertEquals("reference", argumentOf(() -> Verifier.compare(widest, new double[] {7}, null, Tolerance.bitExact(), "ref")));
        }
    }

    @Test void aResultComparedWithItsOwnMemoryIsRefused() {
        try (Tensor a = Tensor.of(Device.CPU, DType.F32, new float[] {1f, 2f, 3f, 4f}, 4);
             Tensor b = Tensor.of(Device.CPU, DType.F32, new float[] {1f, 2f, 3f, 4f}, 4)) {
            // the same tensor, or a view of its memory, passes whatever it holds
            assertEquals("expected", argumentOf(() -> Verifier.compare(a, a, Tolerance.bitExact(), "itself")));
            Tensor view = a.reshape(4);
            assertEquals("expected", argumentOf(() -> Verifier.compare(a, view, Tolerance.bitExact(), "a view")));
            assertEquals("expected", argumentOf(() -> Verifier.compare(view, a, Tolerance.ulps(1), "a view")));
            Tensor viewOfView = view.strided(new long[] {4}, new long[] {1}, 0);
            assertEquals("expected", argumentOf(() -> Verifier.compare(viewOfView, view, Tolerance.bitExact(), "a view")));
            // equal values in memory of its own are compared as ever, and so are disjoint views of one buffer
            assertTrue(Verifier.compare(a, b, Tolerance.bitExact(), "another result").pass());
            Tensor head = a.strided(new long[] {2}, new long[] {1}, 0);
            Tensor tail = a.strided(new long[] {2}, new long[] {1}, 2);
            assertFalse(Verifier.sharesMemory(head, tail));
            assertFalse(Verifier.compare(head, tail, Tolerance.bitExact(), "the other half").pass());  // 1, 2 against 3, 4
        }
        // device tensors by byte range (borrowed pointers: refused before any byte is read, so no GPU is needed)
        Device gpu = Device.cuda(0);
        Tensor x = Tensor.borrow(gpu, DType.F32, 0x10000, new long[] {4}, null);        // bytes [0x10000, 0x10010)
        Tensor tail = Tensor.borrow(gpu, DType.F32, 0x10008, new long[] {4}, null);     // overlaps x's last 8 bytes
        Tensor next = Tensor.borrow(gpu, DType.F32, 0x10010, new long[] {4}, null);     // right after x
        Tensor spread = Tensor.borrow(gpu, DType.F32, 0xff00, new long[] {4}, new long[] {32});  // reaches into x
        assertEquals("expected", argumentOf(() -> Verifier.compare(x, tail, Tolerance.bitExact(), "vendor")));
        assertEquals("expected", argumentOf(() -> Verifier.compare(spread, x, Tolerance.bitExact(), "vendor")));
        assertTrue(Verifier.sharesMemory(x, tail) && Verifier.sharesMemory(tail, x));
        assertTrue(Verifier.sharesMemory(x, spread));
        assertFalse(Verifier.sharesMemory(x, next), "adjacent ranges do not overlap");
        assertFalse(Verifier.sharesMemory(tail, Tensor.borrow(gpu, DType.F32, 0x20000, new long[] {4}, null)));
    }

    @Test void aToleranceWithAMeaninglessParameterCannotBeMade() {
        assertEquals("kind", argumentOf(() -> new Tolerance(null, 0, 0, 0)));
        assertEquals("maxUlp", argumentOf(() -> new Tolerance(Tolerance.Kind.ULP, -1, 0, 0)));
        assertEquals("maxUlp", argumentOf(() -> new Tolerance(Tolerance.Kind.ULP, Long.MIN_VALUE, 0, 0)));
        assertEquals("n", argumentOf(() -> Tolerance.ulps(-1)));
        assertEquals("n", argumentOf(() -> Tolerance.ulps(Tolerance.MAX_ULPS + 1)));  // ulps(65536) passed 1.0 against -1000 in F16
        for (double bad : new double[] {Double.NaN, INF, -INF, -1e-30}) {
            assertEquals("outU", argumentOf(() -> new Tolerance(Tolerance.Kind.ACCUMULATION, 0, bad, 1e-6)), String.valueOf(bad));
            assertEquals("accTerm", argumentOf(() -> new Tolerance(Tolerance.Kind.ACCUMULATION, 0, 0x1p-24, bad)), String.valueOf(bad));
        }
        // an infinite term would have passed any finite result: 1000 for 1 here
        try (Tensor t = Tensor.of(Device.CPU, DType.F32, new float[] {1000f}, 1)) {
            Executable vacuous = () -> Verifier.compare(t, new double[] {1}, new double[] {1},
                    new Tolerance(Tolerance.Kind.ACCUMULATION, 0, 0x1p-24, INF), "ref");
            assertEquals("accTerm", argumentOf(vacuous));
        }
        // a bound at which a zeroed result passes (the scale is at least |ref|) is refused as accumulation() refuses it
        assertEquals("accTerm", argumentOf(() -> new Tolerance(Tolerance.Kind.ACCUMULATION, 0, 0.5, 0.6)));
        assertEquals("accTerm", argumentOf(() -> new Tolerance(Tolerance.Kind.ACCUMULATION, 0, 0, 1)));
        assertEquals(0.999, new Tolerance(Tolerance.Kind.ACCUMULATION, 0, 0, 0.999).accTerm());
        assertEquals(0.6, new Tolerance(Tolerance.Kind.ULP, 0, 0.5, 0.6).accTerm());  // not an accumulation bound
        // the factories and the direct forms the ops use still make tolerances
        assertEquals(Tolerance.Kind.BIT_EXACT, Tolerance.bitExact().kind());
        assertEquals(0, Tolerance.ulps(0).maxUlp());
        assertEquals(Tolerance.MAX_ULPS, Tolerance.ulps(Tolerance.MAX_ULPS).maxUlp());
        assertEquals("maxUlp", argumentOf(() -> new Tolerance(Tolerance.Kind.ULP, Tolerance.MAX_ULPS + 1, 0, 0)));
        assertTrue(Tolerance.accumulation(DType.BF16, 0, 1).accTerm() > 0);
        assertEquals(0.0, new Tolerance(Tolerance.Kind.ACCUMULATION, 0, 0, 0).accTerm());
    }

    @Test void rightResultsStillPass() {
        try (Tensor t = Tensor.ofInts(Device.CPU, new int[] {Integer.MIN_VALUE, Integer.MAX_VALUE, 0, -1, 16_777_217}, 5)) {
            Verdict v = Verifier.compare(t, new double[] {-2147483648.0, 2147483647.0, -0.0, -1, 16_777_217}, null,
                    Tolerance.bitExact(), "ref");
            assertTrue(v.pass() && v.bitExact(), v.toString());
            assertEquals(0.0, v.maxRelErr());
            assertTrue(Verifier.compare(t, new double[] {-2147483647.0, 2147483646.0, 1, 0, 16_777_216}, null, Tolerance.ulps(1), "ref").pass());
        }
        try (Tensor b = Tensor.ofBytes(Device.CPU, new byte[] {-128, 127, 0, 1}, 4)) {
            Verdict v = Verifier.compare(b, new double[] {-128, 127, 0, 1}, null, Tolerance.bitExact(), "ref");
            assertTrue(v.pass() && v.bitExact(), v.toString());
        }
        for (DType dt : new DType[] {DType.F32, DType.F16, DType.BF16}) {
            float[] values = {Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, 1f, Float.NaN};
            double[] ref = {INF, -INF, 1, Double.NaN};
            try (Tensor t = Tensor.of(Device.CPU, dt, values, 4); Tensor u = Tensor.of(Device.CPU, dt, values, 4)) {
                // the same infinity under an ulp rule, under an accumulation rule, and against another result
                Verdict ulp = Verifier.compare(t, ref, null, Tolerance.ulps(1), "ref");
                assertTrue(ulp.pass() && ulp.bitExact(), dt + " " + ulp);
                Verdict acc = Verifier.compare(t, ref, new double[] {1, 1, 1, 0}, Tolerance.accumulation(dt, 8, 2), "ref");
                assertTrue(acc.pass() && acc.bitExact(), dt + " " + acc);
                assertEquals(0.0, acc.maxRelErr());
                Verdict vendor = Verifier.compare(t, u, Tolerance.ulps(1), "vendor");
                assertTrue(vendor.pass() && vendor.bitExact(), dt + " " + vendor);
                // a finite reference that overflows the dtype still matches the infinity it rounds to
                assertTrue(Verifier.compare(t, new double[] {1e300, -1e300, 1, Double.NaN}, new double[] {1e300, 1e300, 1, 0},
                        Tolerance.accumulation(dt, 8, 2), "ref").pass(), dt.toString());
            }
        }
        try (Tensor t = Tensor.of(Device.CPU, DType.F32, new float[] {1.5f, 2f}, 2)) {
            // a zero scale is a magnitude like any other
            assertTrue(Verifier.compare(t, new double[] {1.5, 2}, new double[] {0, 0}, Tolerance.accumulation(DType.F32, 8, 1), "ref").pass());
        }
    }
}
