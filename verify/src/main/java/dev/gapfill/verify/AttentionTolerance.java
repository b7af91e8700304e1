package dev.gapfill.verify;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.reference.GqaDecodeReference;

/**
 * Error bounds for attention decode ({@link dev.gapfill.ops.GqaDecode}), derived from the computation, never fitted.
 *
 * <p>Output. o = Σ_j p_j·v_j is a convex combination of V rows (p_j ≥ 0, Σ p_j = 1). With u = 2^-24 (fp32) and
 * σ = max_j scale·Σ_d |q_d·k_jd| (the largest magnitude a score's terms reach):
 * <ol>
 *   <li>each score is a D-term fp32 dot product (plus the scale and base-2 conversion): |ŝ_j − s_j| ≤ γ_{D+2}·σ;</li>
 *   <li>the exponent s_j − m is rounded (≤ u·2σ) and exp2f is within 2 ulp; after normalisation each p̂_j/p_j lies
 *   within exp(±2Δ) of 1, Δ the largest exponent error: |p̂_j − p_j| ≲ 2(D+8)u·max(1,σ)·p_j;</li>
 *   <li>Σ p_j·v_j and Σ p_j accumulate len terms in fp32 (online rescaling and the split merge add a few more
 *   roundings): γ_{len+64} relative to Σ p_j·|v_j|;</li>
 *   <li>one rounding to the output dtype: u_T·|o|.</li>
 * </ol>
 * Hence {@code |ô − o| ≤ u_T·|o| + 2·γ_k·Σ_j p_j|v_j|}, k = len + 2(D+8)·max(1,σ) + 64, the factor 2 (growth)
 * covering exp2f's ulps and the first-order expansions. Both GPU paths round P to the cache dtype before P·V (the
 * vendor composition between its two GEMMs, the custom kernel for its tensor-core P·V): p̂_j = p_j(1 + δ_j), |δ_j| ≤ u_T,
 * while the normaliser Σ p_j stays in fp32, which adds u_T·Σ_j p_j|v_j|; the CPU reference does not round P. This is {@link Tolerance#accumulation}'s form with the per-element
 * scale Σ_j p_j|v_j| ({@link GqaDecodeReference.Exact#absTerms()}); the test uses the largest len and σ of the batch.
 *
 * <p>Log-sum-exp. lse = m + log Σ exp(s_j − m), m cancelling exactly: each exponent is off by at most the score error
 * and its rounding, (D+8)u·max(1,σ) as in 1.–2. (per term, not growing with len), and the final roundings u·|lse| each,
 * both taken 4 times; the len-term fp32 sum of positive terms is within γ_n relatively, n = len + 64 (the split merge)
 * + 2⌈len/64⌉ (each 64-key tile's online rescaling: an exp2f factor within 2 ulp and a product, counted as two more
 * roundings), and the logarithm turns a relative error δ of the sum into an absolute one of δ/(1−δ), which the factor
 * 2 of a truncating tensor-core adder (≤ 2u per step, as in the output bound) covers:
 * {@code |lŝe − lse| ≤ 4u·|lse| + 4(D+8)·u·max(1, σ) + 2(len + 64 + 2⌈len/64⌉)·u}. Until the forty-ninth session the
 * len term was 4(len+64)·u: at len 20 000 a merge that dropped the last 64 keys (lse 3.3e-3 low) passed a 4.9e-3 bound
 * (now 2.6e-3), found by a review's perturbation of the GPU test's own case; and before the forty-seventh it was
 * multiplied by max(1, σ) too, which at len 32768, D = 256, σ = 16 allowed 0.126 (a merge that dropped a tenth of the keys
 * moves the lse by 0.105). Realistic fp32 sums err by about √len·u, far inside. An empty sequence must give −inf.
 */
public final class AttentionTolerance {
    private static final double U32 = 0x1p-24;

    private AttentionTolerance() {}

    /**
     * The output bound for a batch whose longest sequence is {@code maxLen} and largest score magnitude {@code maxSigma}.
     *
     * @param probabilitiesRounded true where P is rounded to {@code out} before P·V ({@link #roundsProbabilities})
     * @throws dev.gapfill.core.ArgumentException (an IllegalArgumentException) where {@code maxLen} &lt; 0, {@code headDim}
     *     &lt; 1 or {@code maxSigma} is not a finite number ≥ 0, and where u_out plus the accumulation factor 2·γ_k (+ u_out
     *     where P is rounded; k = maxLen + 2(D+8)·max(1,σ) + 64) reaches 1: there the bound would pass a zeroed result, so no
     *     result can be said to pass; it names {@code maxSigma} when the scores' magnitude makes the bound vacuous (σ &gt; 1
     *     and the bound at σ = 1 is not), else {@code maxLen}
     */
    public static Tolerance output(DType out, int maxLen, int headDim, double maxSigma, boolean probabilitiesRounded) {
        if (out == null) {
            throw new ArgumentException("out", "the output dtype", "null");
        }
        if (maxLen < 0) {
            throw new ArgumentException("maxLen", ">= 0", String.valueOf(maxLen));
        }
        if (headDim < 1) {
            throw new ArgumentException("headDim", ">= 1", String.valueOf(headDim));
        }
        if (!(maxSigma >= 0) || maxSigma == Double.POSITIVE_INFINITY) {  // NaN fails the comparison
            throw new ArgumentException("maxSigma", "a finite score magnitude >= 0", String.valueOf(maxSigma));
        }
        double k = lengthK(maxLen, headDim, maxSigma);
        double outU = out.unitRoundoff();
        double rounded = probabilitiesRounded ? outU : 0;
        double acc = accumulation(k, rounded);
        if (!(outU + acc < 1)) {
            boolean bySigma = maxSigma > 1 && outU + accumulation(lengthK(maxLen, headDim, 1), rounded) < 1;
            throw new ArgumentException(bySigma ? "maxSigma" : "maxLen",
                    "k = len + 2(D+8)·max(1,sigma) + 64 with u_out + 2·γ_k (+ u_out where P is rounded) < 1 (beyond it the"
                            + " attention bound admits any result no larger than the reference's magnitudes, zero included)",
                    "k = " + k + " (maxLen " + maxLen + ", headDim " + headDim + ", maxSigma " + maxSigma + ")");
        }
        return new Tolerance(Tolerance.Kind.ACCUMULATION, 0, outU, acc);
    }

    /**
     * The bound's accumulation factor 2·γ_k + {@code rounded}: infinite where k·u ≥ 1 (γ_k bounds nothing there). Where
     * u_out + factor ≥ 1, |ô − o| ≤ u_out·|o| + factor·Σ p_j|v_j| holds for ô = 0 (|o| ≤ Σ p_j|v_j|), so the bound could
     * not fail a zeroed result.
     */
    private static double accumulation(double k, double rounded) {
        if (k * U32 >= 1) {
            return Double.POSITIVE_INFINITY;
        }
        return 2 * (k * U32 / (1 - k * U32)) + rounded;
    }

    /** The bound's effective accumulation length k = len + 2(D+8)·max(1,σ) + 64. */
    private static double lengthK(int maxLen, int headDim, double maxSigma) {
        return maxLen + 2.0 * (headDim + 8) * Math.max(1.0, maxSigma) + 64;
    }

    /**
     * Whether a backend rounds P to the cache dtype before P·V: VENDOR (cuBLAS GEMM) and CUSTOM (mma.sync) do.
     *
     * @throws dev.gapfill.core.ArgumentException naming {@code backend} for null or AUTO: pass the backend that ran, a
     *     plan's {@code decision().backend()} (AUTO runs CUSTOM wherever it covers the shape, so "false" would drop a term)
     */
    public static boolean roundsProbabilities(dev.gapfill.ops.Backend backend) {
        if (backend == null || backend == dev.gapfill.ops.Backend.AUTO) {
            throw new ArgumentException("backend", "the backend that ran (decision().backend())", String.valueOf(backend));
        }
        return backend == dev.gapfill.ops.Backend.VENDOR || backend == dev.gapfill.ops.Backend.CUSTOM;
    }

    /** The bound for a whole reference result. */
    public static Tolerance output(DType out, GqaDecodeReference.Exact ref, int headDim, boolean probabilitiesRounded) {
        if (ref == null) {
            throw new ArgumentException("ref", "the reference of the problem", "null");
        }
        return output(out, ref.maxLen(), headDim, ref.maxSigma(), probabilitiesRounded);
    }

    /** Largest allowed |lse − ref| of one (b, h). */
    public static double lseBound(double ref, int len, int headDim, double sigma) {
        double sumTerms = len + 64.0 + 2.0 * Math.ceil(len / 64.0);  // the merge and each tile's online rescaling
        return 4 * U32 * Math.abs(ref) + 4.0 * (headDim + 8) * U32 * Math.max(1.0, sigma) + 2.0 * sumTerms * U32;
    }

    /**
     * Compares an F32 lse {@code [B, Hq]} (any device) with the reference: within {@link #lseBound} where len > 0,
     * exactly −inf where len = 0; where the bound is not finite (an infinite sigma) or the reference is not, only the
     * reference's bits pass.
     *
     * @throws dev.gapfill.core.ArgumentException naming {@code lse} (null, closed, not F32, or not one value per
     *         reference lse), {@code ref} (null or inconsistent) or {@code headDim} (below 1)
     */
    public static Verdict compareLse(Tensor lse, GqaDecodeReference.Exact ref, int headDim) {
        dev.gapfill.core.Checks.open("lse", lse);
        if (lse.dtype() != DType.F32) {
            throw new ArgumentException("lse", "an F32 tensor", String.valueOf(lse.dtype()));
        }
        if (ref == null) {
            throw new ArgumentException("ref", "the reference of the same problem", "null");
        }
        if (headDim < 1) {
            throw new ArgumentException("headDim", ">= 1", String.valueOf(headDim));
        }
        float[] got = lse.device().isCpu() ? hostFloats(lse) : lse.toFloatArray();
        double[] r = ref.lse();
        if (got.length != r.length) {
            throw new ArgumentException("lse", r.length + " values", got.length + " values");
        }
        if (ref.lens().length == 0 || r.length % ref.lens().length != 0 || ref.sigma().length != r.length) {
            throw new ArgumentException("ref", "B >= 1 sequences with Hq lse and sigma values each",
                    ref.lens().length + " lengths, " + r.length + " lse, " + ref.sigma().length + " sigma values");
        }
        int hq = r.length / ref.lens().length;
        long failures = 0;
        long identical = 0;
        long maxUlp = 0;
        double maxRel = 0;
        String first = null;
        for (int i = 0; i < got.length; i++) {
            int len = ref.lens()[i / hq];
            boolean ok;
            if (len == 0) {
                ok = got[i] == Float.NEGATIVE_INFINITY;
            } else {
                double diff = Math.abs(got[i] - r[i]);
                double bound = lseBound(r[i], len, headDim, ref.sigma()[i]);
                // an infinite sigma (a score term of -inf: its probability is 0, the lse stays finite) or a non-finite
                // reference makes the bound infinite: then only the reference's own bits pass, never "within infinity"
                ok = Double.isFinite(bound) && Double.isFinite(r[i])
                        ? Double.isFinite(got[i]) && diff <= bound
                        : Float.floatToRawIntBits(got[i]) == Float.floatToRawIntBits((float) r[i]);
                if (r[i] != 0 && Double.isFinite(diff)) {
                    maxRel = Math.max(maxRel, diff / Math.abs(r[i]));
                } else if (!Double.isFinite(diff) && !ok) {
                    maxRel = Double.POSITIVE_INFINITY;  // a non-finite mismatch, as Verdict reports it elsewhere
                }
                long ulp = Verifier.ulpDistance(DType.F32, Float.floatToRawIntBits(got[i]) & 0xffffffffL,
                        Verifier.roundBits(DType.F32, r[i]));
                maxUlp = Math.max(maxUlp, ulp);
            }
            if (Float.floatToRawIntBits(got[i]) == Float.floatToRawIntBits((float) r[i])) {
                identical++;
            }
            if (!ok) {
                if (first == null) {
                    first = "lse[" + i / hq + ", " + i % hq + "] (len " + len + "): got " + got[i] + ", expected " + r[i];
                }
                failures++;
            }
        }
        return new Verdict("reference", "|d| <= 4u|lse| + 4(D+8)u·max(1,sigma) + 2(len+64+2ceil(len/64))u; -inf for len 0", got.length,
                identical == got.length, identical, maxUlp, maxRel, failures, first, failures == 0);
    }

    private static float[] hostFloats(Tensor t) {
        float[] f = new float[(int) t.numel()];
        for (int i = 0; i < f.length; i++) {
            f[i] = (float) t.getDouble(i);
        }
        return f;
    }
}
