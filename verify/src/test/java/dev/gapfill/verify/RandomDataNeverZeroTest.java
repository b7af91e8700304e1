package dev.gapfill.verify;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.ops.MoeRoute;
import dev.gapfill.verify.arbitraries.GapfillArbitraries;
import org.junit.jupiter.api.Test;

import java.math.BigInteger;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * Random data is never zero (docs/verification.md): the draw that would give exactly 0 (nextFloat() = 0.5 for a range
 * symmetric about 0) gives a non-zero value instead; every other draw is unchanged.
 */
class RandomDataNeverZeroTest {
    /** A source whose every float draw is 0.5: the one draw that maps to 0 in [-a, a). */
    private static Random halves() {
        return new Random(1) {
            private static final long serialVersionUID = 1L;

            @Override public float nextFloat() { return 0.5f; }
        };
    }

    /** A seed whose new Random(seed).nextFloat() is exactly 0.5 (next(24) = 2^23), by inverting the LCG step. */
    private static long seedOfFirstHalf() {
        long mult = 0x5DEECE66DL;
        long mask = (1L << 48) - 1;
        long state1 = (1L << 23) << 24;
        long state0 = BigInteger.valueOf((state1 - 0xBL) & mask).multiply(BigInteger.valueOf(mult).modInverse(BigInteger.ONE.shiftLeft(48)))
                .mod(BigInteger.ONE.shiftLeft(48)).longValue();
        return state0 ^ mult;
    }

    @Test void theCraftedSeedDrawsAHalf() {
        assertEquals(0.5f, new Random(seedOfFirstHalf()).nextFloat());
    }

    @Test void uniformNonZeroMapsOnlyTheZeroDraw() {
        assertNotEquals(0f, GapfillArbitraries.uniformNonZero(halves(), -1, 1));
        assertNotEquals(0f, GapfillArbitraries.uniformNonZero(halves(), -4, 4));
        Random a = new Random(42);
        Random b = new Random(42);
        for (int i = 0; i < 10_000; i++) {
            float want = a.nextFloat() * 2 - 1;
            assertEquals(want, GapfillArbitraries.uniformNonZero(b, -1, 1), "draw " + i + " unchanged");
        }
    }

    @Test void poisonRandomNeverGivesZeroFloats() {
        for (DType dt : new DType[] {DType.F32, DType.F16, DType.BF16}) {
            try (Tensor t = Poison.random(Device.CPU, dt, halves(), 5)) {
                for (int i = 0; i < 5; i++) {
                    assertNotEquals(0.0, t.getDouble(i), dt + " element " + i);
                }
            }
        }
    }

    @Test void attentionInputsNeverHoldZeros() {
        try (Tensor t = GqaDecodeProblems.uniform(halves(), DType.F16, 2, 3)) {
            for (int i = 0; i < 6; i++) {
                assertNotEquals(0.0, t.getDouble(i), "element " + i);
            }
        }
    }

    @Test void routerLogitsNeverHoldZeros() {
        MoeRouteArbitraries.Problem p = new MoeRouteArbitraries.Problem(1, 4, 1, MoeRoute.Score.SOFTMAX, false);
        try (Tensor t = p.logits(Device.CPU, DType.F32, seedOfFirstHalf())) {
            assertNotEquals(0.0, t.getDouble(0));
        }
    }
}
