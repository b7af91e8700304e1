package dev.gapfill.verify.arbitraries;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/**
 * jqwik building blocks for property tests of code that uses Gapfill: dtypes, sizes biased towards the
 * ones that break kernels (1, 7, 17, 97, tile multiples and their neighbours), and problems per op.
 */
public final class GapfillArbitraries {
    private GapfillArbitraries() {}

    /** F32, F16 or BF16. */
    public static Arbitrary<DType> floatDtypes() {
        return Arbitraries.of(DType.F32, DType.F16, DType.BF16);
    }

    /** F16 or BF16 (the tensor-core dtypes). */
    public static Arbitrary<DType> halfDtypes() {
        return Arbitraries.of(DType.F16, DType.BF16);
    }

    /**
     * Sizes in [1, max], half of them from the edge cases: 1, 7, 17, 97 and k·tile − 1, k·tile, k·tile + 1
     * for tile ∈ {8, 16, 32, 64, 128}, k = 1 … 8 and the powers of two above (3·16 ± 1, 5·16 ± 1, 3·64 ± 1 among them).
     *
     * @throws ArgumentException naming {@code max} where it is below 1 (no size to draw)
     */
    public static Arbitrary<Integer> unevenSizes(int max) {
        if (max < 1) {
            throw new ArgumentException("max", "a largest size >= 1", String.valueOf(max));
        }
        java.util.TreeSet<Integer> edges = new java.util.TreeSet<>(java.util.List.of(1, 7, 17, 97));
        for (int tile : new int[] {8, 16, 32, 64, 128}) {
            for (long k = 1; k * tile - 1 <= max; k = k < 8 ? k + 1 : k * 2) {
                for (int d = -1; d <= 1; d++) {
                    long v = k * tile + d;
                    if (v >= 1 && v <= max) {
                        edges.add((int) v);
                    }
                }
            }
        }
        edges.removeIf(v -> v > max);
        return Arbitraries.oneOf(Arbitraries.of(edges), Arbitraries.integers().between(1, max));
    }

    /**
     * One uniform float in [lo, hi) drawn from {@code rnd} ({@code lo + nextFloat()·(hi − lo)}), never exactly 0: the
     * draw that would give 0 gives a fixed non-zero value of [lo, hi) instead ({@link #nonZeroReplacement}: (hi − lo) / 4
     * where that lies in the range, as for every range symmetric about 0), and the rare draw that rounds up to hi itself
     * gives the float just below hi (or that replacement, where that float is 0); every other draw is unchanged. The
     * random data of the verify problems comes from here (docs/verification.md: random inputs, never zeros).
     *
     * @throws ArgumentException naming {@code rnd} where it is null; naming {@code lo} or {@code hi} where it is not a
     *                           finite float; naming {@code hi} where hi ≤ lo, hi − lo overflows to infinity, or [lo, hi)
     *                           holds no non-zero float (lo = 0 and hi = {@link Float#MIN_VALUE})
     */
    public static float uniformNonZero(java.util.Random rnd, float lo, float hi) {
        if (rnd == null) {
            throw new ArgumentException("rnd", "a random source", "null");
        }
        checkRange(lo, hi);
        float v = lo + rnd.nextFloat() * (hi - lo);
        if (v >= hi) {
            v = Math.nextDown(hi);  // lo + f·(hi − lo) with f < 1 can round up to hi
        }
        return v != 0 ? v : nonZeroReplacement(lo, hi);
    }

    /**
     * The value {@link #uniformNonZero} gives in place of a draw of 0: non-zero and inside [lo, hi). It is (hi − lo) / 4
     * where that lies in the range (0.5 for [−1, 1), 2 for [−4, 4)), else the midpoint of the range where that is not 0,
     * else lo, or the smallest positive float where lo is 0.
     *
     * @throws ArgumentException as {@link #uniformNonZero} for a range it refuses
     */
    public static float nonZeroReplacement(float lo, float hi) {
        checkRange(lo, hi);
        float quarter = (hi - lo) / 4;
        if (quarter != 0 && quarter >= lo && quarter < hi) {
            return quarter;
        }
        float mid = lo / 2 + hi / 2;
        if (mid != 0 && mid >= lo && mid < hi) {
            return mid;
        }
        return lo != 0 ? lo : Float.MIN_VALUE;  // lo = ±0: the range holds (0, hi) with hi > MIN_VALUE (checkRange)
    }

    private static void checkRange(float lo, float hi) {
        if (!Float.isFinite(lo)) {
            throw new ArgumentException("lo", "a finite float", String.valueOf(lo));
        }
        if (!Float.isFinite(hi)) {
            throw new ArgumentException("hi", "a finite float", String.valueOf(hi));
        }
        if (!(hi > lo)) {
            throw new ArgumentException("hi", "a bound above lo=" + lo + " (the range [lo, hi) is empty otherwise)", String.valueOf(hi));
        }
        if (!Float.isFinite(hi - lo)) {
            throw new ArgumentException("hi", "hi − lo finite (lo=" + lo + ")", hi + " (hi − lo overflows)");
        }
        if (lo == 0 && hi <= Float.MIN_VALUE) {
            throw new ArgumentException("hi", "a range [lo, hi) holding a non-zero float (lo=" + lo + ")", String.valueOf(hi));
        }
    }

    /** A seed for the random data of one problem (data is drawn from it, never zeros). */
    public static Arbitrary<Long> seeds() {
        return Arbitraries.longs();
    }

    /**
     * Problems of {@link dev.gapfill.ops.Elementwise#scaleAdd}: n from {@link #unevenSizes}, alpha and beta from
     * {@link #coefficients()} (never 0, so each operand counts: a kernel that ignores one does not pass).
     *
     * @throws ArgumentException naming {@code maxN} where it is below 1
     */
    public static Arbitrary<ElementwiseProblem> elementwise(int maxN) {
        if (maxN < 1) {
            throw new ArgumentException("maxN", "a largest element count >= 1", String.valueOf(maxN));
        }
        return Combinators.combine(floatDtypes(), unevenSizes(maxN), coefficients(), coefficients(), seeds()).as(ElementwiseProblem::new);
    }

    /**
     * Scale coefficients: a magnitude in [1/4, 4] with either sign (±1, ±1/4 and ±4 among the edges), so never 0, and
     * never so small beside the other coefficient (at most 16 times smaller) that its operand's term vanishes in the
     * output's rounding, which would let a kernel ignoring that operand pass.
     */
    public static Arbitrary<Float> coefficients() {
        Arbitrary<Float> magnitude = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(1, Arbitraries.of(0.25f, 1f, 4f)),
                net.jqwik.api.Tuple.of(3, Arbitraries.floats().between(0.25f, 4f)));
        return Combinators.combine(magnitude, Arbitraries.of(1f, -1f)).as((m, sign) -> sign * m);
    }
}
