package dev.gapfill.verify;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.MoeRoute;
import dev.gapfill.verify.arbitraries.GapfillArbitraries;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

import java.util.Random;

/**
 * jqwik arbitraries of MoE routing problems, for downstream property tests of {@code MoeRoute} (and of the grouped GEMMs
 * that read its layout): tokens T, experts E (edges: 1, powers of two, and the 512 limit), k choices (1 to min(E, 32)),
 * softmax or sigmoid scores, renormalised or not, and random logits in a chosen dtype.
 */
public final class MoeRouteArbitraries {
    private MoeRouteArbitraries() {}

    /**
     * One routing problem.
     *
     * @param tokens      T
     * @param experts     E
     * @param topK        k
     * @param score       how logits become weights
     * @param renormalize divide each token's k weights by their sum
     * @throws ArgumentException naming {@code tokens}, {@code experts}, {@code topK} or {@code score} where the problem is
     *                           not one {@code MoeRoute} accepts: T or E below 1, E above {@link MoeRoute#MAX_EXPERTS}, k
     *                           outside [1, min(E, {@link MoeRoute#MAX_TOP_K})], a null score, T·E logits above 2^31-1
     *                           or T·k routed rows above 2^31-1025 (MoeRoute's 32-bit indexing)
     */
    public record Problem(int tokens, int experts, int topK, MoeRoute.Score score, boolean renormalize) {
        public Problem {
            if (tokens < 1) {
                throw new ArgumentException("tokens", "a value >= 1", String.valueOf(tokens));
            }
            if (experts < 1 || experts > MoeRoute.MAX_EXPERTS) {
                throw new ArgumentException("experts", "a value in [1, " + MoeRoute.MAX_EXPERTS + "]", String.valueOf(experts));
            }
            if (topK < 1 || topK > Math.min(experts, MoeRoute.MAX_TOP_K)) {
                throw new ArgumentException("topK", "a value in [1, min(experts=" + experts + ", " + MoeRoute.MAX_TOP_K + ")]",
                        String.valueOf(topK));
            }
            if (score == null) {
                throw new ArgumentException("score", "one of " + java.util.Arrays.toString(MoeRoute.Score.values()), "null");
            }
            if ((long) tokens * experts > Integer.MAX_VALUE) {
                throw new ArgumentException("tokens", "tokens·experts <= 2^31-1 (the logits' element count)", tokens + "·" + experts);
            }
            if ((long) tokens * topK > MAX_ROUTED_ROWS) {
                throw new ArgumentException("tokens", "tokens·topK <= 2^31-1025 (MoeRoute's 32-bit indexing)", tokens + "·" + topK);
            }
        }

        /** The routing options of this problem (backend AUTO). */
        public MoeRoute.Options options() {
            return MoeRoute.Options.topK(topK).withScore(score).withRenormalize(renormalize);
        }

        /**
         * Router logits [T, E] on {@code device}: uniform in [-4, 4) and never 0, rounded once to {@code dtype}; half types make ties
         * between experts likely, which the routing breaks towards the lower expert index.
         */
        public Tensor logits(Device device, DType dtype, long seed) {
            if (dtype == null) {
                throw new ArgumentException("dtype", "F32, F16 or BF16", "null");
            }
            // staged as T·E floats on the host (at least the bytes of any of the three dtypes): refused before the float[]
            long bytes = (long) tokens * experts * Float.BYTES;
            if (bytes > Integer.MAX_VALUE) {
                throw new ArgumentException("tokens", "tokens·experts·4 <= 2^31-1 bytes of logits to stage on the host",
                        tokens + "·" + experts + "·4 = " + bytes);
            }
            Random rnd = new Random(seed);
            float[] v = new float[tokens * experts];
            for (int i = 0; i < v.length; i++) {
                v[i] = GapfillArbitraries.uniformNonZero(rnd, -4, 4);
            }
            return Tensor.of(device, dtype, v, tokens, experts);
        }

        @Override public String toString() {
            return "T=" + tokens + " E=" + experts + " k=" + topK + " " + score + (renormalize ? " renormalised" : "");
        }
    }

    /** MoeRoute's bound on T·k (2^31 - 1025: 32-bit indexing, loop steps included). */
    private static final long MAX_ROUTED_ROWS = Integer.MAX_VALUE - 1024L;

    /**
     * Problems with 1 ≤ T ≤ maxTokens and 1 ≤ E ≤ min(maxExperts, 512) (a larger maxExperts is taken as 512, MoeRoute's
     * limit), k in [1, min(E, 32)].
     *
     * @throws ArgumentException naming {@code maxTokens} or {@code maxExperts} where it is below 1, or naming
     *                           {@code maxTokens} where the largest problem would not be one MoeRoute accepts
     *                           (maxTokens·min(maxExperts, 512) logits above 2^31-1, or maxTokens·min(maxExperts, 512, 32)
     *                           routed rows above 2^31-1025)
     */
    public static Arbitrary<Problem> problems(int maxTokens, int maxExperts) {
        if (maxTokens < 1) {
            throw new ArgumentException("maxTokens", "a value >= 1", String.valueOf(maxTokens));
        }
        if (maxExperts < 1) {
            throw new ArgumentException("maxExperts", "a value >= 1", String.valueOf(maxExperts));
        }
        int eMax = Math.min(maxExperts, MoeRoute.MAX_EXPERTS);
        if ((long) maxTokens * eMax > Integer.MAX_VALUE || (long) maxTokens * Math.min(eMax, MoeRoute.MAX_TOP_K) > MAX_ROUTED_ROWS) {
            throw new ArgumentException("maxTokens", "maxTokens·E <= 2^31-1 logits and maxTokens·k <= 2^31-1025 routed rows for E up to "
                    + eMax + ", k up to " + Math.min(eMax, MoeRoute.MAX_TOP_K), String.valueOf(maxTokens));
        }
        Arbitrary<Integer> experts = Arbitraries.oneOf(Arbitraries.integers().between(1, eMax),
                Arbitraries.of(1, 2, 8, 64, 128, 160, 256, MoeRoute.MAX_EXPERTS).filter(e -> e <= eMax));
        return experts.flatMap(e -> Combinators.combine(Arbitraries.integers().between(1, maxTokens),
                Arbitraries.integers().between(1, Math.min(e, MoeRoute.MAX_TOP_K)), Arbitraries.of(MoeRoute.Score.values()),
                Arbitraries.of(true, false))
                .as((t, k, score, renorm) -> new Problem(t, e, k, score, renorm)));
    }
}
