package dev.gapfill.verify;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.ops.Int8Mm;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/**
 * jqwik arbitraries of int8_mm problems, for downstream property tests of {@code Int8Mm}: M, N, K (a multiple
 * of 16), output dtype, per-token/per-channel or scalar scales, and whether a bias is added. A third of each size
 * is drawn from its edge cases: M from 1 and the token tiles' bounds (8, 16, 32, 64 and their neighbours), N from the
 * channel tiles' (64, 128, 256 and neighbours, and 7, 9, 17), K from 16·{1, 2, 3, 7, 8, 9, 15, 16, 17} (one and several
 * 128-wide steps, with remainders); the rest uniformly in range.
 */
public final class Int8MmArbitraries {
    private Int8MmArbitraries() {}

    /**
     * One problem.
     *
     * @param perToken per-token aScale [M] and per-channel wScale [N] (else one scalar each); ignored for I32
     * @param bias     add a per-channel F32 bias; ignored for I32
     */
    public record Problem(int m, int n, int k, DType out, boolean perToken, boolean bias) {
        @Override public String toString() {
            return "M=" + m + " N=" + n + " K=" + k + " " + out + (out == DType.I32 ? "" : (perToken ? " per-token" : " scalar") + (bias ? "+bias" : ""));
        }
    }

    /**
     * Problems with 1 ≤ M ≤ maxM, 1 ≤ N ≤ maxN, 16 ≤ K ≤ 16·maxK16 (K always a multiple of 16). The bounds are those of
     * problems {@code Int8Mm} accepts: K at most {@link Int8Mm#MAX_K} (the int32 accumulator's limit), and A [M, K], W
     * [N, K] and the output [M, N] at most 2^31-1 elements each (32-bit indexing), so no drawn problem is refused.
     *
     * @throws ArgumentException naming {@code maxM}, {@code maxN} or {@code maxK16} where it is below 1; naming
     *                           {@code maxK16} where 16·maxK16 exceeds {@link Int8Mm#MAX_K}; naming {@code maxN} where
     *                           maxM·maxN exceeds 2^31-1, and {@code maxM} or {@code maxN} where maxM·16·maxK16 or
     *                           maxN·16·maxK16 does
     */
    public static Arbitrary<Problem> problems(int maxM, int maxN, int maxK16) {
        positive("maxM", maxM);
        positive("maxN", maxN);
        positive("maxK16", maxK16);
        if (16L * maxK16 > Int8Mm.MAX_K) {
            throw new ArgumentException("maxK16", "at most Int8Mm.MAX_K / 16 = " + Int8Mm.MAX_K / 16 + " (K = 16·maxK16 <= " + Int8Mm.MAX_K
                    + ", so that the int32 accumulator cannot overflow)", maxK16 + " (K up to " + 16L * maxK16 + ")");
        }
        int32Elements("maxN", "the output [M, N]", (long) maxM * maxN, maxM, maxN, 0);
        int32Elements("maxM", "A [M, K]", (long) maxM * 16 * maxK16, maxM, maxN, maxK16);
        int32Elements("maxN", "W [N, K]", (long) maxN * 16 * maxK16, maxM, maxN, maxK16);
        return Combinators.combine(sized("maxM", maxM, 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65),
                sized("maxN", maxN, 1, 7, 9, 17, 63, 64, 65, 127, 128, 129, 255, 256, 257),
                sized("maxK16", maxK16, 1, 2, 3, 7, 8, 9, 15, 16, 17).map(x -> 16 * x),
                Arbitraries.of(DType.I32, DType.F32, DType.F16, DType.BF16), Arbitraries.of(true, false), Arbitraries.of(true, false))
                .as(Problem::new);
    }

    private static void positive(String argument, int v) {
        if (v < 1) {
            throw new ArgumentException(argument, "a value >= 1", String.valueOf(v));
        }
    }

    private static void int32Elements(String argument, String tensor, long elements, int maxM, int maxN, int maxK16) {
        if (elements > Integer.MAX_VALUE) {
            throw new ArgumentException(argument, "bounds under which " + tensor + " holds at most 2^31-1 elements (Int8Mm indexes it "
                    + "with 32 bits)", "maxM=" + maxM + ", maxN=" + maxN + (maxK16 > 0 ? ", maxK16=" + maxK16 : "") + ": up to " + elements + " elements");
        }
    }

    /**
     * Sizes in [1, max]: one in three from {@code edges} (those within range), the rest uniform.
     *
     * @throws ArgumentException naming {@code argument} where {@code max} is below 1
     */
    static Arbitrary<Integer> sized(String argument, int max, int... edges) {
        positive(argument, max);
        Arbitrary<Integer> uniform = Arbitraries.integers().between(1, max);
        java.util.List<Integer> in = java.util.Arrays.stream(edges).filter(e -> e <= max).boxed().toList();
        return in.isEmpty() ? uniform
                : Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(1, Arbitraries.of(in)), net.jqwik.api.Tuple.of(2, uniform));
    }
}
