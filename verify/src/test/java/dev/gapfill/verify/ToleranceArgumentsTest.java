package dev.gapfill.verify;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bounds reject arguments that would make them vacuous or meaningless: k·u ≥ 1 (γ_k infinite or negative) or u_out
 * plus the accumulation factor at 1 or more (the bound would pass a zeroed result), a
 * growth that is not a finite number ≥ 1, a negative length, a score magnitude that is not a finite number ≥ 0.
 */
class ToleranceArgumentsTest {
    private static String argumentOf(Runnable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call::run);
        assertTrue(e instanceof ArgumentException, "names its argument: " + e);
        return ((ArgumentException) e).argument();
    }

    @Test void accumulationRejectsAVacuousLength() {
        assertEquals("k", argumentOf(() -> Tolerance.accumulation(DType.F32, 1 << 24, 1)), "k·u = 1: γ_k infinite");
        assertEquals("k", argumentOf(() -> Tolerance.accumulation(DType.F16, (1 << 24) + 1, 2)), "k·u > 1: γ_k negative");
        assertEquals("k", argumentOf(() -> Tolerance.accumulation(DType.F16, Long.MAX_VALUE, 1)));
        assertEquals("out", argumentOf(() -> Tolerance.accumulation(null, 16, 1)));
        assertEquals("out", argumentOf(() -> AttentionTolerance.output(null, 16, 64, 1, true)));
        assertEquals("ref", argumentOf(() -> AttentionTolerance.output(DType.F16, (dev.gapfill.ops.reference.GqaDecodeReference.Exact) null, 64, true)));
        assertEquals("act", argumentOf(() -> DepthwiseConv3x3Verification.custom(null)));
        assertEquals("act", argumentOf(() -> DepthwiseConv3x3Verification.vendor(DType.F16, null)));
        assertEquals("out", argumentOf(() -> DepthwiseConv3x3Verification.vendor(null, dev.gapfill.ops.DepthwiseConv3x3.Activation.NONE)));
        assertEquals("k", argumentOf(() -> Tolerance.accumulation(DType.F16, -5, 1)));
        // k·u < 1 but u_out + growth·γ_k ≥ 1: |0 − ref| = |ref| ≤ u_out·|ref| + growth·γ_k·Σ|terms|, a zeroed result passes
        assertEquals("k", argumentOf(() -> Tolerance.accumulation(DType.F32, 1 << 23, 1)), "k·u = 1/2: γ_k = 1");
        assertEquals("k", argumentOf(() -> Tolerance.accumulation(DType.F16, 5_590_585, 2)), "2·γ_k + 2^-11 just over 1");
        assertEquals("k", argumentOf(() -> Tolerance.accumulation(DType.F16, (1 << 24) / 3, 2)), "2·γ_k < 1, but not with u_out");
        assertEquals("k", argumentOf(() -> Tolerance.accumulation(DType.F16, (1 << 24) - 1, 1)));
        // a growth so large that one rounding is already vacuous is named as the growth
        assertEquals("growth", argumentOf(() -> Tolerance.accumulation(DType.F32, 0, 0x1p24)));
        assertEquals("k", argumentOf(() -> Tolerance.accumulation(DType.F16, 2, 0x1p23)));  // fine at k = 1 (0.5 + u_out)
    }

    @Test void accumulationRejectsAGrowthThatIsNotAFiniteNumberAtLeastOne() {
        assertEquals("growth", argumentOf(() -> Tolerance.accumulation(DType.F32, 64, Double.POSITIVE_INFINITY)));
        assertEquals("growth", argumentOf(() -> Tolerance.accumulation(DType.F32, 64, Double.NaN)));
        assertEquals("growth", argumentOf(() -> Tolerance.accumulation(DType.F32, 64, 0.5)));
    }

    @Test void accumulationKeepsItsBoundBelowTheVacuousLength() {
        Tolerance t = Tolerance.accumulation(DType.F16, 4096, 2);
        assertEquals(2 * (4096 * 0x1p-24 / (1 - 4096 * 0x1p-24)), t.accTerm());
        assertEquals(0x1p-11, t.outU());
        Tolerance largest = Tolerance.accumulation(DType.F32, (1 << 23) - 1, 1);
        assertTrue(largest.accTerm() > 0.99 && largest.outU() + largest.accTerm() < 1, largest.toString());
        Tolerance largestTensorCores = Tolerance.accumulation(DType.F16, 5_590_584, 2);
        assertTrue(largestTensorCores.accTerm() > 0.99 && largestTensorCores.outU() + largestTensorCores.accTerm() < 1,
                largestTensorCores.toString());
        // and even there a zeroed result fails: its error |ref| exceeds (u_out + factor)·|ref| where Σ|terms| = |ref|
        try (dev.gapfill.core.Tensor zero16 = dev.gapfill.core.Tensor.of(dev.gapfill.core.Device.CPU, DType.F16, new float[2], 2);
             dev.gapfill.core.Tensor zero32 = dev.gapfill.core.Tensor.of(dev.gapfill.core.Device.CPU, DType.F32, new float[2], 2)) {
            for (Object[] c : new Object[][] {{zero16, largestTensorCores}, {zero32, largest}}) {
                Verdict v = Verifier.compare((dev.gapfill.core.Tensor) c[0], new double[] {1.5, -2.0}, new double[] {1.5, 2.0},
                        (Tolerance) c[1], "reference");
                assertTrue(!v.pass(), c[1] + ": " + v);
            }
        }
        assertEquals(Tolerance.accumulation(DType.F32, 1, 1), Tolerance.accumulation(DType.F32, 0, 1), "k = 0 counts as one rounding");
    }

    @Test void attentionBoundRejectsAVacuousLengthOrScoreMagnitude() {
        // k = len + 2(D + 8)·max(1, σ) + 64 ≥ 2^24: the bound would be infinite or negative
        assertEquals("maxSigma", argumentOf(() -> AttentionTolerance.output(DType.F16, 4096, 128, 1e6, true)));
        assertEquals("maxLen", argumentOf(() -> AttentionTolerance.output(DType.F16, (1 << 24) - 64, 128, 1, true)));
        assertEquals("maxSigma", argumentOf(() -> AttentionTolerance.output(DType.F16, 4096, 128, Double.NaN, true)));
        assertEquals("maxSigma", argumentOf(() -> AttentionTolerance.output(DType.F16, 4096, 128, Double.POSITIVE_INFINITY, true)));
        assertEquals("maxSigma", argumentOf(() -> AttentionTolerance.output(DType.F16, 4096, 128, -1, true)));
        assertEquals("maxLen", argumentOf(() -> AttentionTolerance.output(DType.F16, -1, 128, 1, true)));
        assertEquals("headDim", argumentOf(() -> AttentionTolerance.output(DType.F16, 16, 0, 1, true)));
    }

    @Test void attentionBoundThatWouldPassAZeroedResultIsRefused() {
        // k·u < 1 but u_out + 2·γ_k ≥ 1: |0 − o| = |o| ≤ u_out·|o| + 2γ_k·Σ p|v|, so a zeroed output would pass
        assertEquals("maxLen", argumentOf(() -> AttentionTolerance.output(DType.F16, 6_000_000, 128, 1, false)));  // 2·γ_k = 1.11
        assertEquals("maxSigma", argumentOf(() -> AttentionTolerance.output(DType.F16, 4096, 128, 25_000, false)));  // 272·σ ≈ 6.8M
        // the limits, k = len + 2·136 + 64: u_F16 + 2·γ_k < 1 up to len 5,590,248; with P rounded, u_F16 more, up to 5,588,427
        Tolerance edge = AttentionTolerance.output(DType.F16, 5_590_248, 128, 1, false);
        assertTrue(edge.accTerm() > 0.99 && edge.outU() + edge.accTerm() < 1, edge.toString());
        assertEquals("maxLen", argumentOf(() -> AttentionTolerance.output(DType.F16, 5_590_249, 128, 1, false)));
        Tolerance roundedEdge = AttentionTolerance.output(DType.F16, 5_588_427, 128, 1, true);
        assertTrue(roundedEdge.outU() + roundedEdge.accTerm() < 1, roundedEdge.toString());
        assertEquals("maxLen", argumentOf(() -> AttentionTolerance.output(DType.F16, 5_588_428, 128, 1, true)));
        assertEquals("maxLen", argumentOf(() -> AttentionTolerance.output(DType.F16, 5_590_248, 128, 1, true)), "the rounding moves the limit");
    }

    @Test void attentionBoundOfRealisticProblemsIsUnchanged() {
        // the largest the suites reach: len 32k, D = 256, σ ≤ sqrt(D)·max|q|·max|k| = 16 for data in [-1, 1)
        Tolerance t = AttentionTolerance.output(DType.BF16, 32768, 256, 16, true);
        double k = 32768 + 2.0 * (256 + 8) * 16 + 64;
        assertEquals(2 * (k * 0x1p-24 / (1 - k * 0x1p-24)) + 0x1p-8, t.accTerm());
        assertEquals(0x1p-8, t.outU());
    }

    @Test void theLseBoundGrowsWithLenAndSigmaApartNotWithTheirProduct() {
        double u = 0x1p-24;
        // len 32768, D = 256, σ = 16 (the suites' largest): 4u|lse| + 4·264·16·u + 2·(32768 + 64 + 2·512)·u ≈ 0.0050 at lse 10
        double b = AttentionTolerance.lseBound(10, 32768, 256, 16);
        assertEquals(4 * u * 10 + 4.0 * 264 * 16 * u + 2.0 * (32768 + 64 + 1024) * u, b, 1e-15);
        assertTrue(b < 0.01, "an lse 0.105 too low (a tenth of the keys dropped) must fail: bound " + b);
        // GqaDecodeGpuTest's BF16 case (D = 128, 16/2 heads, len 20 000): a merge that drops the last 64 keys moves the lse
        // by log(20000 / 19936) = 3.2e-3, which the old 4(len + 64)·u term (4.8e-3) let pass
        double dropped = Math.log(20000.0 / 19936.0);
        assertTrue(AttentionTolerance.lseBound(5, 20000, 128, 4) < dropped, "a dropped 64-key tile at len 20 000 must fail");
        // σ below 1 counts as 1; an empty-ish sequence keeps the fixed terms
        assertEquals(AttentionTolerance.lseBound(0, 1, 64, 1), AttentionTolerance.lseBound(0, 1, 64, 0.25));
        assertEquals(4.0 * 72 * u + 2.0 * (1 + 64 + 2) * u, AttentionTolerance.lseBound(0, 1, 64, 1), 1e-18);
    }

    @Test void roundingOfProbabilitiesIsAskedOfTheBackendThatRan() {
        assertEquals("backend", argumentOf(() -> AttentionTolerance.roundsProbabilities(dev.gapfill.ops.Backend.AUTO)));
        assertEquals("backend", argumentOf(() -> AttentionTolerance.roundsProbabilities(null)));
        assertTrue(AttentionTolerance.roundsProbabilities(dev.gapfill.ops.Backend.CUSTOM));
        assertTrue(AttentionTolerance.roundsProbabilities(dev.gapfill.ops.Backend.VENDOR));
        assertFalse(AttentionTolerance.roundsProbabilities(dev.gapfill.ops.Backend.REFERENCE));
    }
}
