package dev.gapfill.verify;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.verify.arbitraries.ElementwiseProblem;
import dev.gapfill.verify.arbitraries.GapfillArbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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

    @Test void poisonIsNeverAccepted() {
        try (Tensor t = Tensor.of(Device.CPU, DType.F32, new float[] {1f, 2f}, 2)) {
            t.setRawBits(0, 0xffffffffL); // NaN: an element the kernel never wrote
            Verdict v = Verifier.compare(t, new double[] {1, 2}, new double[] {1e30, 1e30}, Tolerance.accumulation(DType.F32, 1 << 20, 2), "ref");
            assertFalse(v.pass(), v.toString());
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
}
