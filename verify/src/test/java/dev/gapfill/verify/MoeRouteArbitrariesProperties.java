package dev.gapfill.verify;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.MoeRoute;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The routing arbitraries in use, as a downstream project would write them: on the CPU backend, every problem picks the
 * k largest logits and lays them out with the invariants a grouped GEMM relies on.
 */
class MoeRouteArbitrariesProperties {
    @Provide
    Arbitrary<MoeRouteArbitraries.Problem> problems() {
        return MoeRouteArbitraries.problems(40, 300);
    }

    @Property(tries = 80)
    void layoutIsAPermutationGroupedByExpert(@ForAll("problems") MoeRouteArbitraries.Problem p, @ForAll long seed) {
        DType dt = new DType[] {DType.F32, DType.F16, DType.BF16}[(int) Math.floorMod(seed, 3L)];
        try (Tensor logits = p.logits(Device.CPU, dt, seed); MoeRoute.Routing r = MoeRoute.route(logits, p.options())) {
            int t = p.tokens();
            int k = p.topK();
            int[] off = r.offsets.toIntArray();
            int[] gather = r.gather.toIntArray();
            int[] rowOf = r.rowOf.toIntArray();
            int[] ids = r.topkIds.toIntArray();
            float[] w = r.weights.toFloatArray();
            float[] tw = r.topkWeights.toFloatArray();
            float[] lg = logits.toFloatArray();
            assertEquals(p.experts() + 1, off.length, p::toString);
            assertEquals(0, off[0], p::toString);
            assertEquals(t * k, off[p.experts()], p::toString);
            for (int e = 0; e < p.experts(); e++) {
                assertTrue(off[e] <= off[e + 1], p + ": offsets not monotonic at expert " + e);
                for (int row = off[e]; row + 1 < off[e + 1]; row++) {
                    assertTrue(gather[row] <= gather[row + 1], p + ": rows of expert " + e + " not in token order");
                }
            }
            for (int tok = 0; tok < t; tok++) {
                float sum = 0;
                for (int j = 0; j < k; j++) {
                    int row = rowOf[tok * k + j];
                    int e = ids[tok * k + j];
                    assertEquals(tok, gather[row], p + ": rowOf and gather disagree for token " + tok);
                    assertTrue(off[e] <= row && row < off[e + 1], p + ": row " + row + " is not in expert " + e + "'s range");
                    assertEquals(tw[tok * k + j], w[row], p + ": weight of token " + tok + " choice " + j);
                    assertTrue(w[row] >= 0 && w[row] <= 1, p + ": weight " + w[row]);
                    for (int j2 = 0; j2 < j; j2++) {
                        assertTrue(ids[tok * k + j2] != e, p + ": token " + tok + " chose expert " + e + " twice");
                    }
                    sum += w[row];
                }
                // the chosen experts are the k largest logits, ties going to the lower expert index
                boolean[] chosen = new boolean[p.experts()];
                for (int j = 0; j < k; j++) {
                    chosen[ids[tok * k + j]] = true;
                }
                for (int a = 0; a < p.experts(); a++) {
                    for (int b = 0; b < p.experts(); b++) {
                        if (chosen[a] && !chosen[b]) {
                            float la = lg[tok * p.experts() + a];
                            float lb = lg[tok * p.experts() + b];
                            assertTrue(la > lb || (la == lb && a < b), p + ": token " + tok + " chose expert " + a + " (" + la
                                    + ") over expert " + b + " (" + lb + ")");
                        }
                    }
                }
                if (p.renormalize()) {
                    assertEquals(1.0, sum, 1e-5, p + ": renormalised weights of token " + tok + " sum to " + sum);
                }
            }
        }
    }

    /** Logits too large to stage on the host are refused, naming tokens, before anything is allocated. */
    @org.junit.jupiter.api.Test void logitsTooLargeToStageAreRefusedFirst() {
        MoeRouteArbitraries.Problem p = new MoeRouteArbitraries.Problem(1 << 28, 4, 2, MoeRoute.Score.SOFTMAX, true);
        for (DType dt : new DType[] {DType.F32, DType.F16, DType.BF16}) {
            assertEquals("tokens", org.junit.jupiter.api.Assertions.assertThrows(dev.gapfill.core.ArgumentException.class,
                    () -> p.logits(Device.CPU, dt, 1)).argument(), dt.toString());
        }
        assertEquals("dtype", org.junit.jupiter.api.Assertions.assertThrows(dev.gapfill.core.ArgumentException.class,
                () -> p.logits(Device.CPU, null, 1)).argument());
        MoeRouteArbitraries.Problem fits = new MoeRouteArbitraries.Problem(3, 4, 2, MoeRoute.Score.SOFTMAX, true);
        try (Tensor t = fits.logits(Device.CPU, DType.F16, 1)) {
            assertEquals(12, t.numel());
        }
    }
}
