package dev.gapfill.verify;

import dev.gapfill.core.DType;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/**
 * jqwik arbitraries of int8_mm problems, for downstream property tests of {@code Int8Mm}: M, N, K (a multiple
 * of 16), output dtype, per-token/per-channel or scalar scales, and whether a bias is added. Sizes are biased
 * towards the edges (1, tile boundaries) by jqwik's shrinking-friendly integer generators.
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
        return Combinators.combine(Arbitraries.integers().between(1, maxM), Arbitraries.integers().between(1, maxN),
                Arbitraries.integers().between(1, maxK16).map(x -> 16 * x), Arbitraries.of(DType.I32, DType.F32, DType.F16, DType.BF16),
                Arbitraries.of(true, false), Arbitraries.of(true, false)).as(Problem::new);
    }
}
