package dev.gapfill.verify.arbitraries;

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
     */
    public static Arbitrary<Integer> unevenSizes(int max) {
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
     * draw that would give 0 gives (hi − lo) / 4 instead, every other draw is unchanged. The random data of the verify
     * problems comes from here (docs/verification.md: random inputs, never zeros).
     */
    public static float uniformNonZero(java.util.Random rnd, float lo, float hi) {
        float v = lo + rnd.nextFloat() * (hi - lo);
        return v != 0 ? v : (hi - lo) / 4;
    }

    /** A seed for the random data of one problem (data is drawn from it, never zeros). */
    public static Arbitrary<Long> seeds() {
        return Arbitraries.longs();
    }

    /** Problems of {@link dev.gapfill.ops.Elementwise#scaleAdd}. */
    public static Arbitrary<ElementwiseProblem> elementwise(int maxN) {
        return Combinators.combine(floatDtypes(), unevenSizes(maxN), Arbitraries.floats().between(-4, 4),
                Arbitraries.floats().between(-4, 4), seeds()).as(ElementwiseProblem::new);
    }
}
