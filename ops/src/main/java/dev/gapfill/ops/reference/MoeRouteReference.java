package dev.gapfill.ops.reference;

import dev.gapfill.core.Tensor;
import dev.gapfill.ops.MoeRoute;

/**
 * CPU reference of {@link MoeRoute}: selection on the raw logits (ties to the lower expert index),
 * probabilities in fp64, one rounding to F32; rows ordered by (expert, token, choice).
 */
public final class MoeRouteReference {
    private MoeRouteReference() {}

    public static void route(Tensor logits, int k, boolean sigmoid, boolean renormalize, MoeRoute.Routing out) {
        int t = (int) logits.dim(0);
        int e = (int) logits.dim(1);
        int[] ids = new int[t * k];
        double[] w = weights(logits, k, sigmoid, renormalize, ids);
        int[] counts = new int[e + 1];
        for (int id : ids) {
            counts[id + 1]++;
        }
        for (int x = 0; x < e; x++) {
            counts[x + 1] += counts[x];
        }
        int[] next = counts.clone();
        for (int x = 0; x <= e; x++) {
            out.offsets.setDouble(x, counts[x]);
        }
        for (int i = 0; i < t * k; i++) { // (token, choice) order = stable inside each expert
            int pos = next[ids[i]]++;
            out.gather.setDouble(pos, i / k);
            out.weights.setDouble(pos, w[i]);
            out.rowOf.setDouble(i, pos);
            out.topkIds.setDouble(i, ids[i]);
            out.topkWeights.setDouble(i, w[i]);
        }
    }

    /** Top-k ids (into {@code ids}, token-major) and their exact weights. */
    public static double[] weights(Tensor logits, int k, boolean sigmoid, boolean renormalize, int[] ids) {
        int t = (int) logits.dim(0);
        int e = (int) logits.dim(1);
        double[] w = new double[t * k];
        double[] v = new double[e];
        for (int tok = 0; tok < t; tok++) {
            double m = Double.NEGATIVE_INFINITY;
            for (int x = 0; x < e; x++) {
                double raw = logits.getDouble((long) tok * e + x);
                v[x] = Double.isNaN(raw) ? Double.NEGATIVE_INFINITY : raw;  // as the kernel reads it (route.cu)
                m = Math.max(m, v[x]);
            }
            double s = 0;
            if (!sigmoid) {
                for (int x = 0; x < e; x++) {
                    s += Math.exp(v[x] - m);
                }
            }
            boolean[] taken = new boolean[e];
            double picked = 0;
            for (int j = 0; j < k; j++) {
                int best = -1;
                for (int x = 0; x < e; x++) {
                    if (!taken[x] && (best < 0 || v[x] > v[best])) {
                        best = x;
                    }
                }
                taken[best] = true;
                double p = sigmoid ? 1 / (1 + Math.exp(-v[best])) : Math.exp(v[best] - m) / s;
                ids[tok * k + j] = best;
                w[tok * k + j] = p;
                picked += p;
            }
            if (renormalize) {
                for (int j = 0; j < k; j++) {
                    w[tok * k + j] /= picked;
                }
            }
        }
        return w;
    }
}
