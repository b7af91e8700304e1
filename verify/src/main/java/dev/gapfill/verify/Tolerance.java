package dev.gapfill.verify;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;

/**
 * How close a result must be to the fp64 reference. Policy (docs/verification.md):
 * <ul>
 *   <li>{@link #bitExact()}: integer outputs, and float outputs whose summation order is defined;</li>
 *   <li>{@link #ulps(int)}: elementwise float results (activations, one rounding after fp32 math);</li>
 *   <li>{@link #accumulation(DType, long, double)}: reductions whose order is not defined (GEMMs,
 *   attention): {@code |out − ref| ≤ u_out·|ref| + growth·k·u_acc·scale}, where {@code scale} is the
 *   reference's sum of absolute terms (Σ|a·b|) for that element, {@code u} the unit roundoff and
 *   {@code k} the reduction length. That is the classical worst-case bound γ_k for recursive fp32
 *   summation plus one rounding to the output; {@code growth} ≥ 1 covers the tensor cores' internal
 *   accumulation (stated per op, never raised to make a test pass). The verifier adds half the
 *   output dtype's subnormal spacing, the absolute error of rounding into its gradual-underflow range.</li>
 * </ul>
 *
 * @param kind     which rule
 * @param maxUlp   for ULP: the largest allowed distance in units in the last place of the output dtype
 * @param outU     unit roundoff of the output dtype
 * @param accTerm  growth·k·u_acc, multiplied by the per-element scale
 * @throws dev.gapfill.core.ArgumentException (an IllegalArgumentException) naming the component where {@code kind} is
 *         null, {@code maxUlp} is negative (or, for ULP, above {@value #MAX_ULPS}), or {@code outU} or {@code accTerm} is not a finite number ≥ 0 (an infinite
 *         one would pass any finite result; a negative or NaN one means nothing), or (ACCUMULATION) where
 *         {@code outU + accTerm ≥ 1}: the per-element scale is at least |ref|, so such a bound would pass a zeroed
 *         result (named {@code accTerm}; {@link #accumulation} refuses the same before it builds one)
 */
public record Tolerance(Kind kind, long maxUlp, double outU, double accTerm) {
    /** The rule a tolerance applies. */
    public enum Kind { BIT_EXACT, ULP, ACCUMULATION }

    public Tolerance {
        if (kind == null) {
            throw new ArgumentException("kind", "a rule (BIT_EXACT, ULP or ACCUMULATION)", "null");
        }
        if (maxUlp < 0 || (kind == Kind.ULP && maxUlp > MAX_ULPS)) {
            throw new ArgumentException("maxUlp", "a distance in [0, " + MAX_ULPS + "] (F16 has 1024 values a binade: more passes"
                    + " results of another sign)", String.valueOf(maxUlp));
        }
        requireFiniteNonNegative("outU", outU);
        requireFiniteNonNegative("accTerm", accTerm);
        if (kind == Kind.ACCUMULATION && outU + accTerm >= 1) {
            throw new ArgumentException("accTerm", "outU + accTerm < 1 (at 1 or more the bound passes a zeroed result)",
                    "outU " + outU + " + accTerm " + accTerm);
        }
    }

    private static void requireFiniteNonNegative(String component, double v) {
        if (!(v >= 0) || v == Double.POSITIVE_INFINITY) {  // NaN fails the comparison
            throw new ArgumentException(component, "a finite number >= 0", String.valueOf(v));
        }
    }

    /** The largest distance {@link #ulps} takes. */
    public static final int MAX_ULPS = 1024;

    public static Tolerance bitExact() { return new Tolerance(Kind.BIT_EXACT, 0, 0, 0); }

    /**
     * At most {@code n} units in the last place of the output dtype (integers: absolute difference).
     *
     * @throws dev.gapfill.core.ArgumentException naming {@code n} where it is negative or above {@value #MAX_ULPS}: F16
     *         has 1024 values a binade, so a larger distance passes results of another sign (a read-only review,
     *         fiftieth session: {@code ulps(65536)} passed 1.0 against −1000); use an accumulation bound instead
     */
    public static Tolerance ulps(int n) {
        if (n < 0 || n > MAX_ULPS) {
            throw new ArgumentException("n", "a distance in [0, " + MAX_ULPS + "] ulps", String.valueOf(n));
        }
        return new Tolerance(Kind.ULP, n, 0, 0);
    }

    /**
     * Bound for a reduction of length {@code k} accumulated in fp32 and rounded once to {@code out}.
     *
     * @param k      reduction length ≥ 0 (0 counts as 1) with u_out + growth·γ_k &lt; 1 (γ_k = k·u/(1 − k·u), u = 2^-24: k
     *               &lt; 2^23 at growth 1 into F32, k ≤ 5,590,584 at growth 2 into F16). Where u_out + growth·γ_k ≥ 1 the
     *               bound {@code u_out·|ref| + growth·γ_k·Σ|terms|} would pass a zeroed result (|ref| ≤ Σ|terms|), and
     *               γ_k bounds nothing at all once k·u ≥ 1
     * @param growth factor ≥ 1 over the classical γ_k bound (1 for FFMA in any order; 2 for tensor cores), finite
     * @throws dev.gapfill.core.ArgumentException (an IllegalArgumentException) naming {@code k} or {@code growth}
     */
    public static Tolerance accumulation(DType out, long k, double growth) {
        if (out == null) {
            throw new ArgumentException("out", "the output dtype", "null");
        }
        if (!(growth >= 1) || growth == Double.POSITIVE_INFINITY) {  // NaN fails the comparison
            throw new ArgumentException("growth", "a finite factor >= 1", String.valueOf(growth));
        }
        double uAcc = DType.F32.unitRoundoff();
        if (k < 0 || k * uAcc >= 1) {  // exact: k is a long below 2^63, u a power of two
            throw new ArgumentException("k", "0 <= k < " + (long) (1 / uAcc) + " (k·u < 1; at k·u >= 1 the γ_k bound is vacuous)",
                    String.valueOf(k));
        }
        double kk = Math.max(k, 1);
        double gamma = kk * uAcc / (1 - kk * uAcc);
        double outU = out.unitRoundoff();
        if (!(outU + growth * gamma < 1)) {
            // named after what makes it vacuous: the growth where even one rounding (k = 1) would, else the length
            boolean byGrowth = !(outU + growth * (uAcc / (1 - uAcc)) < 1);
            throw new ArgumentException(byGrowth ? "growth" : "k",
                    "u_out + growth·γ_k < 1 (at 1 or more the bound passes a zeroed result)",
                    "k " + k + ", growth " + growth + ": u_out + growth·γ_k = " + (outU + growth * gamma));
        }
        return new Tolerance(Kind.ACCUMULATION, 0, outU, growth * gamma);
    }

    @Override public String toString() {
        switch (kind) {
            case BIT_EXACT: return "bit-exact";
            case ULP: return "<= " + maxUlp + " ulp";
            default: return String.format("|d| <= %.3g|ref| + %.3g*sum|terms|", outU, accTerm);
        }
    }
}
