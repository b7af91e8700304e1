package dev.gapfill.verify;

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
     */
    public record Problem(int tokens, int experts, int topK, MoeRoute.Score score, boolean renormalize) {
        /** The routing options of this problem (backend AUTO). */
        public MoeRoute.Options options() {
            return MoeRoute.Options.topK(topK).withScore(score).withRenormalize(renormalize);
        }

        /**
         * Router logits [T, E] on {@code device}: uniform in [-4, 4) and never 0, rounded once to {@code dtype}; half types make ties
         * between experts likely, which the routing breaks towards the lower expert index.
         */
        public Tensor logits(Device device, DType dtype, long seed) {
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

    /** Problems with 1 ≤ T ≤ maxTokens and 1 ≤ E ≤ min(maxExperts, 512). */
    public static Arbitrary<Problem> problems(int maxTokens, int maxExperts) {
        int eMax = Math.min(maxExperts, 512);
        Arbitrary<Integer> experts = Arbitraries.oneOf(Arbitraries.integers().between(1, eMax),
                Arbitraries.of(1, 2, 8, 64, 128, 160, 256, 512).filter(e -> e <= eMax));
        return experts.flatMap(e -> Combinators.combine(Arbitraries.integers().between(1, maxTokens),
                Arbitraries.integers().between(1, Math.min(e, 32)), Arbitraries.of(MoeRoute.Score.values()), Arbitraries.of(true, false))
                .as((t, k, score, renorm) -> new Problem(t, e, k, score, renorm)));
    }
}
