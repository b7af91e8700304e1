package dev.gapfill.verify;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.Checks;
import dev.gapfill.core.DType;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.MoeRoute;
import dev.gapfill.ops.reference.MoeRouteReference;

import java.util.Arrays;

/**
 * moeRoute's verification policy as API. The integer outputs (offsets, gather, rowOf, topkIds) are compared exactly
 * with the reference, and the expert-order weights with the choices' bits ({@link #layoutMismatch}); {@link #topkWeights} compares the router weights with the fp64 reference under
 * {@code Tolerance.accumulation(F32, E + k + 16 + ceil(min(spread, 128)), 2)}, spread being the largest max − min of a
 * row's finite logits: the fp32 softmax (or sigmoid) sums E exponentials whose arguments carry the row's spread, then
 * divides. NaN logits (read as −∞) and infinite ones take no part in the spread.
 */
public final class MoeRouteVerification {
    private MoeRouteVerification() {}

    /** The largest row spread of finite logits the weight bound counts (e^-128 is far below fp32's smallest normal). */
    static final double MAX_SPREAD = 128;

    /**
     * {@code topkWeights} ([T, k] F32, on any device) against the reference weights of {@code logits} (a host tensor
     * [T, E]) under {@code options}.
     */
    public static Verdict topkWeights(Tensor logits, MoeRoute.Options options, Tensor topkWeights) {
        if (options == null) {
            throw new ArgumentException("options", "MoeRoute.Options", "null");
        }
        Checks.open("logits", logits);
        Checks.rank("logits", logits, 2);
        if (!logits.device().isCpu()) {
            throw new ArgumentException("logits", "a host tensor (the reference reads it element by element)", logits.device().toString());
        }
        int t = (int) logits.dim(0);
        int e = (int) logits.dim(1);
        int k = options.topK();
        if (k < 1 || k > e) {
            throw new ArgumentException("options.topK", "1 <= k <= E = " + e, String.valueOf(k));
        }
        Checks.open("topkWeights", topkWeights);
        Checks.dtype("topkWeights", topkWeights, DType.F32);
        Checks.shape("topkWeights", topkWeights, "[T, k]", t, k);
        double[] exact = MoeRouteReference.weights(logits, k, options.score() == MoeRoute.Score.SIGMOID, options.renormalize(),
                new int[t * k]);
        double spread = 0;
        for (int tok = 0; tok < t; tok++) {
            double hi = Double.NEGATIVE_INFINITY;
            double lo = Double.POSITIVE_INFINITY;
            for (int x = 0; x < e; x++) {
                double v = logits.getDouble((long) tok * e + x);
                if (Double.isFinite(v)) {  // NaN and ±inf take no part in the exponentials' arguments (NaN reads as -inf)
                    hi = Math.max(hi, v);
                    lo = Math.min(lo, v);
                }
            }
            if (hi >= lo) {
                spread = Math.max(spread, hi - lo);
            }
        }
        double[] scale = Arrays.stream(exact).map(Math::abs).toArray();
        // past MAX_SPREAD every weight whose argument carries the spread is below fp32's normal range, where the
        // bound's absolute (subnormal) term holds it; a larger count only overflowed the bound's argument
        Tolerance tol = Tolerance.accumulation(DType.F32, e + k + 16 + (long) Math.ceil(Math.min(spread, MAX_SPREAD)), 2);
        return Verifier.compare(topkWeights, exact, scale, tol, "reference");
    }

    /**
     * The layout outputs of {@code got} against {@code ref}, the reference's routing of the same logits: offsets,
     * gather, rowOf and topkIds exactly, and each expert-order weight the very bits of its choice's
     * ({@code weights[rowOf[i]] == topkWeights[i]}: the sort copies them). Null when all hold, else the first difference.
     */
    public static String layoutMismatch(MoeRoute.Routing ref, MoeRoute.Routing got) {
        if (ref == null || got == null) {
            throw new ArgumentException(ref == null ? "ref" : "got", "a routing", "null");
        }
        if (ref == got) {  // a routing compared with itself matches whatever it holds
            throw new ArgumentException("got", "another routing than ref", "ref itself");
        }
        String[] names = {"topkIds", "offsets", "gather", "rowOf"};
        Tensor[][] pairs = {{ref.topkIds, got.topkIds}, {ref.offsets, got.offsets}, {ref.gather, got.gather}, {ref.rowOf, got.rowOf}};
        for (int n = 0; n < names.length; n++) {
            int[] a = pairs[n][0].toIntArray();
            int[] b = pairs[n][1].toIntArray();
            int at = Arrays.mismatch(a, b);
            if (at >= 0) {
                return names[n] + "[" + at + "] = " + (at < b.length ? b[at] : "(missing)") + ", reference "
                        + (at < a.length ? a[at] : "(missing)");
            }
        }
        int[] rowOf = got.rowOf.toIntArray();
        float[] tw = got.topkWeights.toFloatArray();
        float[] w = got.weights.toFloatArray();
        for (int i = 0; i < tw.length; i++) {
            if (rowOf[i] < 0 || rowOf[i] >= w.length || Float.floatToRawIntBits(w[rowOf[i]]) != Float.floatToRawIntBits(tw[i])) {
                return "weights[rowOf[" + i + "] = " + rowOf[i] + "] is not topkWeights[" + i + "] = " + tw[i];
            }
        }
        return null;
    }
}
