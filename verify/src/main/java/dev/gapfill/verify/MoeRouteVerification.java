package dev.gapfill.verify;

import dev.gapfill.core.DType;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.MoeRoute;
import dev.gapfill.ops.reference.MoeRouteReference;

import java.util.Arrays;

/**
 * moeRoute's verification policy for its float output as API. The integer outputs (offsets, gather, rowOf, topkIds) are
 * compared exactly with the reference; {@link #topkWeights} compares the router weights with the fp64 reference under
 * {@code Tolerance.accumulation(F32, E + k + 16 + ceil(spread), 2)}, spread being the largest max − min of a row's
 * logits: the fp32 softmax (or sigmoid) sums E exponentials whose arguments carry the row's spread, then divides.
 */
public final class MoeRouteVerification {
    private MoeRouteVerification() {}

    /**
     * {@code topkWeights} ([T, k] F32, on any device) against the reference weights of {@code logits} (a host tensor
     * [T, E]) under {@code options}.
     */
    public static Verdict topkWeights(Tensor logits, MoeRoute.Options options, Tensor topkWeights) {
        int t = (int) logits.dim(0);
        int e = (int) logits.dim(1);
        int k = options.topK();
        double[] exact = MoeRouteReference.weights(logits, k, options.score() == MoeRoute.Score.SIGMOID, options.renormalize(),
                new int[t * k]);
        double spread = 0;
        for (int tok = 0; tok < t; tok++) {
            double hi = Double.NEGATIVE_INFINITY;
            double lo = Double.POSITIVE_INFINITY;
            for (int x = 0; x < e; x++) {
                double v = logits.getDouble((long) tok * e + x);
                hi = Math.max(hi, v);
                lo = Math.min(lo, v);
            }
            spread = Math.max(spread, hi - lo);
        }
        double[] scale = Arrays.stream(exact).map(Math::abs).toArray();
        Tolerance tol = Tolerance.accumulation(DType.F32, e + k + 16 + (long) Math.ceil(spread), 2);
        return Verifier.compare(topkWeights, exact, scale, tol, "reference");
    }
}
