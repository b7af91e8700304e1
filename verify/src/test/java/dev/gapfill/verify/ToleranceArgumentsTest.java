package dev.gapfill.verify;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bounds reject arguments that would make them vacuous or meaningless: k·u ≥ 1 (γ_k infinite or negative) or an
 * accumulation factor of 1 or more (the bound would pass a zeroed result), a
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
        assertEquals("k", argumentOf(() -> Tolerance.accumulation(DType.F16, -5, 1)));
        // k·u < 1 but growth·γ_k ≥ 1: |0 − ref| = |ref| ≤ Σ|terms| ≤ growth·γ_k·Σ|terms|, a zeroed result would pass
        assertEquals("k", argumentOf(() -> Tolerance.accumulation(DType.F32, 1 << 23, 1)), "k·u = 1/2: γ_k = 1");
        assertEquals("k", argumentOf(() -> Tolerance.accumulation(DType.F16, (1 << 24) / 3 + 1, 2)), "k·u just over 1/3: 2·γ_k > 1");
        assertEquals("k", argumentOf(() -> Tolerance.accumulation(DType.F16, (1 << 24) - 1, 1)));
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
        assertTrue(largest.accTerm() > 0.99 && largest.accTerm() < 1, largest.toString());
        Tolerance largestTensorCores = Tolerance.accumulation(DType.F16, (1 << 24) / 3, 2);  // 5,592,405: k·u just under 1/3
        assertTrue(largestTensorCores.accTerm() > 0.99 && largestTensorCores.accTerm() < 1, largestTensorCores.toString());
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
        // k·u < 1 but 2·γ_k ≥ 1 (k·u ≥ 1/3): |0 − o| = |o| ≤ Σ p|v| ≤ 2γ_k·Σ p|v|, so a zeroed output would pass
        int len = 6_000_000;  // k = len + 2·136 + 64: k·u = 0.358, 2·γ_k = 1.11
        assertEquals("maxLen", argumentOf(() -> AttentionTolerance.output(DType.F16, len, 128, 1, false)));
        assertEquals("maxSigma", argumentOf(() -> AttentionTolerance.output(DType.F16, 4096, 128, 25_000, false)));  // 272·σ ≈ 6.8M
        // just inside: 2·γ_k + u_F16 < 1 still gives a bound, below 1
        Tolerance inside = AttentionTolerance.output(DType.F16, 5_000_000, 128, 1, true);
        assertTrue(inside.accTerm() > 0.8 && inside.accTerm() < 1, inside.toString());
        // P rounded adds u_out: the limit moves with it, so a bound just under 1 without the rounding can reach 1 with it
        double k = 5_591_000 + 2.0 * 136 + 64;
        double twoGamma = 2 * (k * 0x1p-24 / (1 - k * 0x1p-24));
        assertTrue(twoGamma < 1 && twoGamma + DType.F16.unitRoundoff() >= 1, "the case sits between the two limits: " + twoGamma);
        assertTrue(AttentionTolerance.output(DType.F16, 5_591_000, 128, 1, false).accTerm() < 1);
        assertEquals("maxLen", argumentOf(() -> AttentionTolerance.output(DType.F16, 5_591_000, 128, 1, true)));
    }

    @Test void attentionBoundOfRealisticProblemsIsUnchanged() {
        // the largest the suites reach: len 32k, D = 256, σ ≤ sqrt(D)·max|q|·max|k| = 16 for data in [-1, 1)
        Tolerance t = AttentionTolerance.output(DType.BF16, 32768, 256, 16, true);
        double k = 32768 + 2.0 * (256 + 8) * 16 + 64;
        assertEquals(2 * (k * 0x1p-24 / (1 - k * 0x1p-24)) + 0x1p-8, t.accTerm());
        assertEquals(0x1p-8, t.outU());
    }
}
