package dev.gapfill.verify;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.ops.MoeRoute;
import dev.gapfill.verify.arbitraries.ElementwiseProblem;
import dev.gapfill.verify.arbitraries.GapfillArbitraries;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shipped arbitraries refuse bounds that make no sense (empty ranges, non-positive sizes, bounds whose largest
 * problem the op itself refuses or whose element counts overflow), naming the argument, and the never-zero draw stays
 * inside the requested range.
 */
class ArbitrariesBoundsTest {
    private static String argumentOf(Runnable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call::run);
        assertTrue(e instanceof ArgumentException, "names its argument: " + e);
        return ((ArgumentException) e).argument();
    }

    /** A source whose every float draw is {@code f}. */
    private static Random drawing(float f) {
        return new Random(1) {
            private static final long serialVersionUID = 1L;

            @Override public float nextFloat() { return f; }
        };
    }

    @Test void bmmRefusesEmptyAndOverflowingBounds() {
        assertEquals("max", argumentOf(() -> BmmArbitraries.dim(0)));
        assertEquals("maxDim", argumentOf(() -> BmmArbitraries.shapes(0, 1, 1)));
        assertEquals("maxBatch", argumentOf(() -> BmmArbitraries.shapes(1, -3, 1)));
        assertEquals("maxMacs", argumentOf(() -> BmmArbitraries.shapes(1, 1, 0)));
        // C [batch, m, n] of 2^32 elements: Bmm refuses it (32-bit indexing)
        assertEquals("maxMacs", argumentOf(() -> BmmArbitraries.shapes(1 << 16, 1 << 16, Long.MAX_VALUE)));
        assertEquals("maxMacs", argumentOf(() -> BmmArbitraries.shapes(1 << 16, 1, Long.MAX_VALUE)));
        assertEquals("maxMacs", argumentOf(() -> BmmArbitraries.shapes(Integer.MAX_VALUE, Integer.MAX_VALUE, 1L << 31)));
        // the MAC budget bounds every operand, or the dims do
        assertDoesNotThrow(() -> BmmArbitraries.shapes(1 << 16, 1 << 16, Integer.MAX_VALUE));
        assertDoesNotThrow(() -> BmmArbitraries.shapes(1 << 15, 1, Long.MAX_VALUE));
        assertDoesNotThrow(() -> BmmArbitraries.shapes(1, 1, 1));
        assertDoesNotThrow(() -> BmmArbitraries.dim(1));
    }

    @Test void int8RefusesEmptyBoundsAndKOrElementCountsTheOpRefuses() {
        assertEquals("maxM", argumentOf(() -> Int8MmArbitraries.problems(0, 8, 8)));
        assertEquals("maxN", argumentOf(() -> Int8MmArbitraries.problems(8, -1, 8)));
        assertEquals("maxK16", argumentOf(() -> Int8MmArbitraries.problems(8, 8, 0)));
        // K = 16·maxK16 above Int8Mm.MAX_K = 131056 = 16·8191, and K overflowing int
        assertEquals("maxK16", argumentOf(() -> Int8MmArbitraries.problems(8, 8, 8192)));
        assertEquals("maxK16", argumentOf(() -> Int8MmArbitraries.problems(8, 8, Integer.MAX_VALUE / 8)));
        assertDoesNotThrow(() -> Int8MmArbitraries.problems(8, 8, 8191));
        // the output [M, N], A [M, K] and W [N, K] within 2^31-1 elements
        assertEquals("maxN", argumentOf(() -> Int8MmArbitraries.problems(1 << 16, 1 << 16, 1)));
        assertEquals("maxM", argumentOf(() -> Int8MmArbitraries.problems(1 << 24, 1, 8)));
        assertEquals("maxN", argumentOf(() -> Int8MmArbitraries.problems(1, 1 << 24, 8)));
        assertDoesNotThrow(() -> Int8MmArbitraries.problems(1 << 15, (1 << 16) - 1, 1));
        assertDoesNotThrow(() -> Int8MmArbitraries.problems(1, 1, 1));
    }

    @Test void depthwiseRefusesEmptyBounds() {
        assertEquals("max", argumentOf(() -> DepthwiseConv3x3Arbitraries.spatial(0)));
        assertEquals("max", argumentOf(() -> DepthwiseConv3x3Arbitraries.channels(-1)));
        assertEquals("maxElements", argumentOf(() -> DepthwiseConv3x3Arbitraries.problems(0)));
        assertDoesNotThrow(() -> DepthwiseConv3x3Arbitraries.problems(1));
        assertDoesNotThrow(() -> DepthwiseConv3x3Arbitraries.problems(Long.MAX_VALUE));
    }

    @Test void moeRouteRefusesEmptyBoundsAndProblemsTheOpRefuses() {
        assertEquals("maxTokens", argumentOf(() -> MoeRouteArbitraries.problems(0, 8)));
        assertEquals("maxExperts", argumentOf(() -> MoeRouteArbitraries.problems(8, 0)));
        // logits [T, E] above 2^31-1 elements; T·k routed rows above MoeRoute's 2^31-1025
        assertEquals("maxTokens", argumentOf(() -> MoeRouteArbitraries.problems(Integer.MAX_VALUE, 512)));
        assertEquals("maxTokens", argumentOf(() -> MoeRouteArbitraries.problems(Integer.MAX_VALUE, 1)));
        assertDoesNotThrow(() -> MoeRouteArbitraries.problems(Integer.MAX_VALUE / 512, 100_000));  // E taken as 512
        assertDoesNotThrow(() -> MoeRouteArbitraries.problems(1, 1));

        MoeRoute.Score s = MoeRoute.Score.SOFTMAX;
        assertEquals("topK", argumentOf(() -> new MoeRouteArbitraries.Problem(4, 4, 5, s, false)), "k > E");
        assertEquals("topK", argumentOf(() -> new MoeRouteArbitraries.Problem(4, 64, 33, s, false)), "k > 32");
        assertEquals("topK", argumentOf(() -> new MoeRouteArbitraries.Problem(4, 4, 0, s, false)));
        assertEquals("experts", argumentOf(() -> new MoeRouteArbitraries.Problem(4, 0, 1, s, false)));
        assertEquals("experts", argumentOf(() -> new MoeRouteArbitraries.Problem(4, 513, 1, s, false)));
        assertEquals("tokens", argumentOf(() -> new MoeRouteArbitraries.Problem(0, 4, 1, s, false)));
        assertEquals("tokens", argumentOf(() -> new MoeRouteArbitraries.Problem(1 << 22, 512, 1, s, false)), "2^31 logits");
        assertEquals("score", argumentOf(() -> new MoeRouteArbitraries.Problem(4, 4, 1, null, false)));
        assertDoesNotThrow(() -> new MoeRouteArbitraries.Problem(4, 512, 32, MoeRoute.Score.SIGMOID, true));
    }

    @Test void elementwiseRefusesEmptyBoundsAndIrrelevantOperands() {
        assertEquals("max", argumentOf(() -> GapfillArbitraries.unevenSizes(0)));
        assertEquals("maxN", argumentOf(() -> GapfillArbitraries.elementwise(-5)));
        assertEquals("alpha", argumentOf(() -> new ElementwiseProblem(DType.F32, 8, 0f, 1f, 1)));
        assertEquals("alpha", argumentOf(() -> new ElementwiseProblem(DType.F32, 8, -0f, 1f, 1)));
        assertEquals("alpha", argumentOf(() -> new ElementwiseProblem(DType.F32, 8, Float.NaN, 1f, 1)));
        assertEquals("beta", argumentOf(() -> new ElementwiseProblem(DType.F16, 8, 1f, 0f, 1)));
        assertEquals("beta", argumentOf(() -> new ElementwiseProblem(DType.F16, 8, 1f, Float.POSITIVE_INFINITY, 1)));
        assertEquals("n", argumentOf(() -> new ElementwiseProblem(DType.BF16, 0, 1f, 1f, 1)));
        assertEquals("dtype", argumentOf(() -> new ElementwiseProblem(DType.I32, 8, 1f, 1f, 1)));
        assertEquals("dtype", argumentOf(() -> new ElementwiseProblem(null, 8, 1f, 1f, 1)));
        assertDoesNotThrow(() -> new ElementwiseProblem(DType.BF16, 1, -0.25f, 4f, 1));
    }

    @Test void uniformNonZeroRefusesRangesWithoutANonZeroValue() {
        Random r = new Random(3);
        assertEquals("hi", argumentOf(() -> GapfillArbitraries.uniformNonZero(r, 1, 1)), "empty range");
        assertEquals("hi", argumentOf(() -> GapfillArbitraries.uniformNonZero(r, 1, -1)), "lo > hi");
        assertEquals("hi", argumentOf(() -> GapfillArbitraries.uniformNonZero(r, 0, Float.MIN_VALUE)), "[0, MIN_VALUE) holds only 0");
        assertEquals("hi", argumentOf(() -> GapfillArbitraries.uniformNonZero(r, -0f, 0f)), "-0 == 0: empty");
        assertEquals("hi", argumentOf(() -> GapfillArbitraries.uniformNonZero(r, -Float.MAX_VALUE, Float.MAX_VALUE)), "hi − lo overflows");
        assertEquals("hi", argumentOf(() -> GapfillArbitraries.uniformNonZero(r, 0, Float.POSITIVE_INFINITY)));
        assertEquals("lo", argumentOf(() -> GapfillArbitraries.uniformNonZero(r, Float.NaN, 1)));
        assertEquals("rnd", argumentOf(() -> GapfillArbitraries.uniformNonZero(null, -1, 1)));
        assertEquals("hi", argumentOf(() -> GapfillArbitraries.nonZeroReplacement(2, 2)));
    }

    @Test void theZeroDrawIsReplacedByANonZeroValueInsideTheRange() {
        // [-3, 1) draws 0 at f = 0.75 and [-7, 1) at f = 0.875: the former replacement (hi − lo) / 4 was 1 and 2, not below hi
        float[][] cases = {{-3, 1, 0.75f}, {-7, 1, 0.875f}, {-1, 1, 0.5f}, {-4, 4, 0.5f}, {0, 1, 0}, {0, 0x1p-148f, 0}, {-0f, 1, 0}};
        for (float[] c : cases) {
            float lo = c[0];
            float hi = c[1];
            assertEquals(0f, lo + c[2] * (hi - lo), "the draw maps to 0 in [" + lo + ", " + hi + ")");
            float v = GapfillArbitraries.uniformNonZero(drawing(c[2]), lo, hi);
            assertTrue(v != 0, "[" + lo + ", " + hi + ")");
            assertTrue(v >= lo && v < hi, v + " outside [" + lo + ", " + hi + ")");
        }
        // unchanged where it was inside: the same data as before for the symmetric ranges the suites draw from
        assertEquals(0.5f, GapfillArbitraries.uniformNonZero(drawing(0.5f), -1, 1));
        assertEquals(2f, GapfillArbitraries.uniformNonZero(drawing(0.5f), -4, 4));
        assertEquals(0.25f, GapfillArbitraries.uniformNonZero(drawing(0), 0, 1));
    }

    @Test void theReplacementLiesInsideEveryRangeItAccepts() {
        float[] ends = {-Float.MAX_VALUE / 2, -1e30f, -7, -3, -1, -0.1f, -Float.MIN_NORMAL, -Float.MIN_VALUE, -0f, 0, Float.MIN_VALUE,
                        2 * Float.MIN_VALUE, Float.MIN_NORMAL, 0.1f, 0.25f, 1, Math.nextUp(1f), 3, 4, 1e30f, Float.MAX_VALUE / 2};
        int checked = 0;
        for (float lo : ends) {
            for (float hi : ends) {
                if (!(hi > lo) || (lo == 0 && hi == Float.MIN_VALUE)) {
                    continue;
                }
                float r = GapfillArbitraries.nonZeroReplacement(lo, hi);
                assertTrue(r != 0 && r >= lo && r < hi, r + " for [" + lo + ", " + hi + ")");
                checked++;
            }
        }
        assertTrue(checked > 150, checked + " ranges");
    }

    @Test void aDrawThatRoundsUpToHiStaysBelowIt() {
        // 1 + (1 − 2^-24)·(2^25 − 1) rounds to 2^25 in float: hi itself, outside [lo, hi)
        float lo = 1;
        float hi = 0x1p25f;
        float f = 1 - 0x1p-24f;
        assertEquals(hi, lo + f * (hi - lo));
        float v = GapfillArbitraries.uniformNonZero(drawing(f), lo, hi);
        assertTrue(v >= lo && v < hi, String.valueOf(v));
        // where the float below hi is 0 itself, the replacement stands in: [-MIN_VALUE, MIN_VALUE) holds only -MIN_VALUE and 0
        float tiny = Float.MIN_VALUE;
        assertEquals(tiny, -tiny + f * (tiny - -tiny));
        assertEquals(-tiny, GapfillArbitraries.uniformNonZero(drawing(f), -tiny, tiny));
    }
}
