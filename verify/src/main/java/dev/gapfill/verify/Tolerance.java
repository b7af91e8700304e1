package dev.gapfill.verify;

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
 */
public record Tolerance(Kind kind, long maxUlp, double outU, double accTerm) {
    /** The rule a tolerance applies. */
    public enum Kind { BIT_EXACT, ULP, ACCUMULATION }

    public static Tolerance bitExact() { return new Tolerance(Kind.BIT_EXACT, 0, 0, 0); }

    public static Tolerance ulps(int n) { return new Tolerance(Kind.ULP, n, 0, 0); }

    /**
     * Bound for a reduction of length {@code k} accumulated in fp32 and rounded once to {@code out}.
     *
     * @param growth factor ≥ 1 over the classical γ_k bound (1 for FFMA in any order; 2 for tensor cores)
     */
    public static Tolerance accumulation(DType out, long k, double growth) {
        if (growth < 1) {
            throw new IllegalArgumentException("growth must be >= 1, got " + growth);
        }
        double uAcc = DType.F32.unitRoundoff();
        double kk = Math.max(k, 1);
        double gamma = kk * uAcc / (1 - kk * uAcc);
        return new Tolerance(Kind.ACCUMULATION, 0, out.unitRoundoff(), growth * gamma);
    }

    @Override public String toString() {
        switch (kind) {
            case BIT_EXACT: return "bit-exact";
            case ULP: return "<= " + maxUlp + " ulp";
            default: return String.format("|d| <= %.3g|ref| + %.3g*sum|terms|", outU, accTerm);
        }
    }
}
