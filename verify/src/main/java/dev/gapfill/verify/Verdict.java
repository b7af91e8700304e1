package dev.gapfill.verify;

/**
 * The outcome of comparing a result with a reference, element by element.
 *
 * @param against       what it was compared with ("reference", "vendor")
 * @param tolerance     the rule applied
 * @param elements      elements compared
 * @param bitExact      every element has the reference's bits (after rounding the reference to the dtype), a NaN
 *                      counting as identical to a NaN whatever its payload (a NaN reference is rare: an empty softmax)
 * @param identical     elements with identical bits (NaN payloads aside, as above)
 * @param maxUlp        largest distance in units in the last place (0 for bit-exact; integers: absolute difference)
 * @param maxRelErr     largest |out − ref| / |ref| over elements with ref ≠ 0; +∞ where a NaN or infinite result (or
 *                      reference) is not identical to the rounded reference
 * @param failures      elements outside the tolerance (NaN where the reference is finite counts; so does an unwritten
 *                      float poison value, NaN; an integer output's poison, -1 for I8 and I32 from 0xff bytes or
 *                      -2139062144 for I32 from 0x80, is caught only where the reference differs from it)
 * @param firstFailure  description of the first failing element, or null
 * @param pass          failures == 0
 */
public record Verdict(String against, String tolerance, long elements, boolean bitExact, long identical, long maxUlp,
                      double maxRelErr, long failures, String firstFailure, boolean pass) {

    /** Fraction of bit-identical elements. */
    public double identicalFraction() { return elements == 0 ? 1.0 : (double) identical / elements; }

    @Override public String toString() {
        return String.format("%s vs %s: %s, %d elements, bit-exact=%s (%.4f identical), max ulp %d, max rel err %.3g%s",
                pass ? "PASS" : "FAIL", against, tolerance, elements, bitExact, identicalFraction(), maxUlp, maxRelErr,
                pass ? "" : ", " + failures + " failures, first: " + firstFailure);
    }
}
