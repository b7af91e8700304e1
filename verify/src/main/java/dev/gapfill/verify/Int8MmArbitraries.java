package dev.gapfill.verify;

import dev.gapfill.core.DType;
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

    /** Problems with 1 ≤ M ≤ maxM, 1 ≤ N ≤ maxN, 16 ≤ K ≤ 16·maxK16. */
    public static Arbitrary<Problem> problems(int maxM, int maxN, int maxK16) {
        return Combinators.combine(sized(maxM, 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65),
                sized(maxN, 1, 7, 9, 17, 63, 64, 65, 127, 128, 129, 255, 256, 257),
                sized(maxK16, 1, 2, 3, 7, 8, 9, 15, 16, 17).map(x -> 16 * x), Arbitraries.of(DType.I32, DType.F32, DType.F16, DType.BF16),
                Arbitraries.of(true, false), Arbitraries.of(true, false)).as(Problem::new);
    }

    /** Sizes in [1, max]: one in three from {@code edges} (those within range), the rest uniform. */
    static Arbitrary<Integer> sized(int max, int... edges) {
        Arbitrary<Integer> uniform = Arbitraries.integers().between(1, max);
        java.util.List<Integer> in = java.util.Arrays.stream(edges).filter(e -> e <= max).boxed().toList();
        return in.isEmpty() ? uniform
                : Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(1, Arbitraries.of(in)), net.jqwik.api.Tuple.of(2, uniform));
    }
}
