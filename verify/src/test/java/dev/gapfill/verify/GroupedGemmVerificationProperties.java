package dev.gapfill.verify;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.GroupedGemm;
import dev.gapfill.ops.reference.GroupedGemmReference;
import dev.gapfill.verify.arbitraries.GapfillArbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The grouped GEMM verification API on the CPU: the reference backend passes, a perturbed result fails. */
class GroupedGemmVerificationProperties {
    @Provide Arbitrary<GroupedGemmVerification.Problem> small() {
        return GroupedGemmVerification.problems().filter(p -> (long) p.rows() * p.k() * p.n() <= 400_000);
    }

    /** The routing a problem stands for: G + 1 non-decreasing offsets from 0 to T_total, the same for the same seed. */
    @Property(tries = 300)
    void offsetsAreAValidRoutingOfTheRows(@ForAll("small") GroupedGemmVerification.Problem p) {
        int[] off = p.offsets();
        assertEquals(p.groups() + 1, off.length);
        assertEquals(0, off[0]);
        assertEquals(p.rows(), off[p.groups()]);
        for (int g = 0; g < p.groups(); g++) {
            assertTrue(off[g + 1] >= off[g], java.util.Arrays.toString(off));
        }
        assertTrue(java.util.Arrays.equals(off, p.offsets()), "deterministic in the seed");
    }

    @Provide Arbitrary<GroupedGemmVerification.Problem> fineGrained() {
        return GroupedGemmVerification.problems(256, 64, 128, 64);
    }

    /** The bounded form stays within its bounds and gives a valid routing at up to 256 experts. */
    @Property(tries = 200)
    void boundedProblemsStayWithinTheirBounds(@ForAll("fineGrained") GroupedGemmVerification.Problem p) {
        assertTrue(p.groups() >= 1 && p.groups() <= 256 && p.rows() >= 1 && p.rows() <= 64, p.toString());
        assertTrue(p.k() % 8 == 0 && p.k() <= 128 && p.n() % 16 == 0 && p.n() <= 64, p.toString());
        offsetsAreAValidRoutingOfTheRows(p);
    }

    @Test void boundsNoProblemCanMeetAreNamed() {
        assertEquals("maxGroups", assertThrows(ArgumentException.class, () -> GroupedGemmVerification.problems(0, 8, 8, 16)).argument());
        assertEquals("maxGroups", assertThrows(ArgumentException.class, () -> GroupedGemmVerification.problems(4097, 8, 8, 16)).argument());
        assertEquals("maxRows", assertThrows(ArgumentException.class, () -> GroupedGemmVerification.problems(4, 0, 8, 16)).argument());
        assertEquals("maxK", assertThrows(ArgumentException.class, () -> GroupedGemmVerification.problems(4, 8, 7, 16)).argument());
        assertEquals("maxN", assertThrows(ArgumentException.class, () -> GroupedGemmVerification.problems(4, 8, 8, 15)).argument());
        // bounds that could draw a problem past the op's 32-bit indexing (K = N = 65 536 is a range end jqwik draws)
        assertEquals("maxK", assertThrows(ArgumentException.class, () -> GroupedGemmVerification.problems(1, 1, 65536, 65536)).argument());
        assertEquals("maxRows", assertThrows(ArgumentException.class, () -> GroupedGemmVerification.problems(1, 1 << 24, 256, 256)).argument());
        GroupedGemmVerification.problems(1, (1 << 23) - 4, 256, 256);  // (2^23 - 1)·256, just below 2^31: taken
    }

    /** About a third of the groups are empty where G > 1 (the javadoc's promise), whatever the rows. */
    @Test void aboutAThirdOfTheGroupsAreEmpty() {
        long empty = 0;
        long groups = 0;
        for (long seed = 0; seed < 2000; seed++) {
            GroupedGemmVerification.Problem p = new GroupedGemmVerification.Problem(16, 4096, 64, 64, DType.F16,
                    GroupedGemm.WeightLayout.KN, false, false, false, seed);
            int[] off = p.offsets();
            for (int g = 0; g < 16; g++) {
                groups++;
                empty += off[g + 1] == off[g] ? 1 : 0;
            }
        }
        double share = (double) empty / groups;
        assertTrue(share > 0.30 && share < 0.37, "empty share " + share);
        GroupedGemmVerification.Problem one = new GroupedGemmVerification.Problem(1, 5, 8, 16, DType.F16,
                GroupedGemm.WeightLayout.KN, false, false, false, 3);
        assertTrue(java.util.Arrays.equals(new int[] {0, 5}, one.offsets()), "one group holds every row");
    }

    @Property(tries = 15)
    void referenceBackendPassesAndAPerturbedElementFails(@ForAll("small") GroupedGemmVerification.Problem p) {
        Random rnd = new Random(p.seed());
        int xRows = p.gather() ? 1 + rnd.nextInt(p.rows() + 3) : p.rows();
        int[] off = p.offsets();
        int[] gi = new int[p.rows()];
        float[] sc = new float[p.rows()];
        for (int r = 0; r < p.rows(); r++) {
            gi[r] = rnd.nextInt(xRows);
            sc[r] = GapfillArbitraries.uniformNonZero(rnd, -1, 1);
        }
        long[] ws = p.layout() == GroupedGemm.WeightLayout.KN ? new long[] {p.groups(), p.k(), p.n()} : new long[] {p.groups(), p.n(), p.k()};
        try (Tensor x = rand(rnd, p.dtype(), xRows, p.k()); Tensor w = rand(rnd, p.dtype(), ws);
             Tensor o = Tensor.ofInts(Device.CPU, off, p.groups() + 1); Tensor g = Tensor.ofInts(Device.CPU, gi, p.rows());
             Tensor s = Tensor.of(Device.CPU, DType.F32, sc, p.rows())) {
            GroupedGemm.Options opt = GroupedGemm.Options.builder().layout(p.layout()).swiglu(p.swiglu())
                    .gather(p.gather() ? g : null).rowScale(p.rowScale() ? s : null).build();
            try (Tensor y = GroupedGemm.run(x, w, o, opt)) {
                Verdict v = GroupedGemmVerification.verify(x, w, o, opt, y);
                assertTrue(v.pass() && v.bitExact(), v.toString());
                int i = rnd.nextInt((int) y.numel());
                double old = y.getDouble(i);
                y.setDouble(i, old == 0 ? 1 : old * 1.5 + Math.copySign(0.25, old));
                assertFalse(GroupedGemmVerification.verify(x, w, o, opt, y).pass());
            }
        }
    }

    @Test void absoluteFloorIsHalfTheSubnormalSpacingOnce() {
        // x = 0: every exact value, GEMM value and Σ|x·w| is 0, so the bound is the final rounding's absolute part alone,
        // 2^-25 for F16: the smallest subnormal (2^-24) is a wrong result, not a rounding of 0
        try (Tensor x = Tensor.of(Device.CPU, DType.F16, new float[16], 2, 8); Tensor w = rand(new Random(7), DType.F16, 1, 8, 16);
             Tensor off = Tensor.ofInts(Device.CPU, new int[] {0, 2}, 2); Tensor y = Tensor.of(Device.CPU, DType.F16, new float[32], 2, 16)) {
            GroupedGemm.Options o = GroupedGemm.Options.defaults();
            assertTrue(GroupedGemmVerification.verify(x, w, off, o, y).pass(), "zeros are exact");
            y.setRawBits(5, 0x0001);
            Verdict v = GroupedGemmVerification.verify(x, w, off, o, y);
            assertFalse(v.pass(), v.toString());
            assertEquals(1, v.failures());
        }
        GroupedGemmReference.Result zero = new GroupedGemmReference.Result(1, 1, false, new double[1], new double[1], new double[1], null);
        Tolerance tol = Tolerance.accumulation(DType.F16, 64, 2);
        assertEquals(0.0, zero.errorScale(tol.accTerm(), DType.F16, false)[0], "Verifier adds the final rounding's floor");
        try (Tensor t = Tensor.of(Device.CPU, DType.F16, new float[1], 1)) {
            t.setRawBits(0, 0x0001);
            assertFalse(Verifier.compare(t, zero.value(), zero.errorScale(tol.accTerm(), DType.F16, false), tol, "ref").pass());
            t.setRawBits(0, 0x8001);
            assertFalse(Verifier.compare(t, zero.value(), zero.errorScale(tol.accTerm(), DType.F16, false), tol, "ref").pass());
        }
        // a result rounded to F16 before a row scale may carry that rounding's absolute floor through the scale (|s| = 1 here)
        GroupedGemmReference.Result scaled = new GroupedGemmReference.Result(1, 1, false, new double[1], new double[1], new double[1],
                new double[] {1.0});
        assertEquals(0x1p-25, scaled.errorScale(tol.accTerm(), DType.F16, true)[0] * tol.accTerm(), 0x1p-25 * 1e-12);
    }

    /** Bad arguments are named before the reference runs: an out of another shape or dtype, bad offsets or gather rows. */
    @Test void badArgumentsAreNamedBeforeTheReferenceRuns() {
        Random rnd = new Random(8);
        try (Tensor x = rand(rnd, DType.F16, 3, 8); Tensor w = rand(rnd, DType.F16, 2, 8, 16);
             Tensor off = Tensor.ofInts(Device.CPU, new int[] {0, 1, 3}, 3); Tensor wide = Tensor.ofInts(Device.CPU, new int[] {0, 4, 3}, 3);
             Tensor y = Tensor.of(Device.CPU, DType.F16, new float[48], 3, 16); Tensor yShort = Tensor.of(Device.CPU, DType.F16, new float[32], 2, 16);
             Tensor yF32 = Tensor.of(Device.CPU, DType.F32, new float[48], 3, 16); Tensor gi = Tensor.ofInts(Device.CPU, new int[] {0, 3, 1}, 3)) {
            GroupedGemm.Options o = GroupedGemm.Options.defaults();
            assertEquals("out", assertThrows(ArgumentException.class, () -> GroupedGemmVerification.verify(x, w, off, o, yShort)).argument());
            assertEquals("out", assertThrows(ArgumentException.class, () -> GroupedGemmVerification.verify(x, w, off, o, yF32)).argument());
            assertEquals("offsets", assertThrows(ArgumentException.class, () -> GroupedGemmVerification.verify(x, w, wide, o, y)).argument());
            GroupedGemm.Options gathered = GroupedGemm.Options.builder().gather(gi).build();  // row 3 of a 3-row x
            assertEquals("gather", assertThrows(ArgumentException.class, () -> GroupedGemmVerification.verify(x, w, off, gathered, y)).argument());
        }
    }

    private static Tensor rand(Random rnd, DType dt, long... shape) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        float[] f = new float[(int) n];
        for (int i = 0; i < f.length; i++) {
            f[i] = GapfillArbitraries.uniformNonZero(rnd, -1, 1);
        }
        return Tensor.of(Device.CPU, dt, f, shape);
    }
}
