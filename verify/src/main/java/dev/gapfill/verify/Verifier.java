package dev.gapfill.verify;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.HalfFloats;
import dev.gapfill.core.Tensor;

import java.util.Arrays;
import java.util.stream.IntStream;

/** Compares a result (any device) with a reference held in fp64 or in the output dtype. */
public final class Verifier {
    /** Elements per chunk of the parallel comparison; inputs up to one chunk are compared serially. */
    private static final int CHUNK = 1 << 16;

    private Verifier() {}

    /**
     * Compares {@code actual} with an exact fp64 reference.
     *
     * <p>Arguments that would make the comparison vacuous are refused before anything is read, with an
     * {@link ArgumentException} naming the argument: a null {@code actual}, {@code reference} or {@code tol}, a closed
     * {@code actual} or one of more than 2^31 − 1 elements, a {@code reference} of another length, and a {@code scale}
     * that is null under an accumulation rule, of another length, or with an entry that is not a finite number ≥ 0 (an
     * infinite one would make the bound infinite: anything would pass; where the reference element is NaN or ±inf the
     * bound takes no part, and its scale entry need only not be negative). Where the data itself cannot be compared the
     * element fails: an infinite or NaN reference passes only the bits of its own rounding (the same infinity, a NaN),
     * never through a bound, and for integer dtypes a reference that is NaN, infinite, not a whole number or outside
     * the dtype's range matches no result. Any NaN matches a NaN reference, so a NaN poison left unwritten there passes:
     * where the reference can hold NaN, poison the output with a finite value the reference cannot produce.
     *
     * @param actual    the result (copied to the host if on a device)
     * @param reference fp64 values of the exact result, one per element, row-major
     * @param scale     per-element Σ|terms| for ACCUMULATION tolerances (may be null otherwise): ≥ 0, and finite where
     *                  the reference is
     * @param tol       the rule
     * @param against   label for the report
     * @throws ArgumentException naming {@code actual}, {@code reference}, {@code scale} or {@code tol} (see above)
     */
    public static Verdict compare(Tensor actual, double[] reference, double[] scale, Tolerance tol, String against) {
        int n = elementCount(actual);
        if (tol == null) {
            throw new ArgumentException("tol", "a tolerance (Tolerance.bitExact(), ulps(n) or accumulation(...))", "null");
        }
        if (reference == null) {
            throw new ArgumentException("reference", n + " values", "null");
        }
        if (reference.length != n) {
            throw new ArgumentException("reference", n + " values", reference.length + " values");
        }
        checkScale(scale, reference, n, tol);
        long[] gotBits = hostBits(actual, n);  // one copy of a device tensor; the values come from these bits
        double[] got = values(actual.dtype(), gotBits);
        DType dt = actual.dtype();
        Tally total;
        if (n <= CHUNK) {
            total = tally(dt, got, gotBits, reference, scale, tol, 0, n); // one chunk: forking would only add overhead
        } else {
            // Tens of millions of elements take seconds serially. Chunks are fixed (not split by the pool), and their
            // tallies are merged in chunk order, so the verdict does not depend on how the threads were scheduled.
            int chunks = n / CHUNK + (n % CHUNK == 0 ? 0 : 1);
            Tally[] parts = IntStream.range(0, chunks).parallel()
                    .mapToObj(c -> {
                        int from = c * CHUNK;
                        return tally(dt, got, gotBits, reference, scale, tol, from, (int) Math.min(n, (long) from + CHUNK));
                    })
                    .toArray(Tally[]::new);
            total = new Tally();
            for (Tally part : parts) {
                total.add(part);
            }
        }
        String first = null;
        if (total.firstFailure >= 0) {
            int i = total.firstFailure;
            first = "element " + i + index(actual.shape(), i) + ": got " + got[i] + ", expected " + reference[i]
                    + (scale != null ? " (scale " + scale[i] + ")" : "");
        }
        return new Verdict(against, tol.toString(), n, total.identical == n, total.identical, total.maxUlp, total.maxRel,
                total.failures, first, total.failures == 0);
    }

    /**
     * The element count of {@code actual} as an int: refused (naming {@code actual}) where it is null, closed, or holds
     * more than 2^31 − 1 elements, which an int count would truncate to a smaller (even a passing) comparison.
     */
    private static int elementCount(Tensor actual) {
        if (actual == null) {
            throw new ArgumentException("actual", "a tensor", "null");
        }
        actual.ensureOpen("actual");
        long numel = actual.numel();
        if (numel > Integer.MAX_VALUE) {
            throw new ArgumentException("actual", "at most 2^31-1 elements to compare", numel + " elements");
        }
        return (int) numel;
    }

    /**
     * A scale bounds an accumulation rule's error: it is required there, and wherever one is passed it holds one
     * magnitude per element, never negative, and finite wherever the reference is: an infinite entry would make that
     * element's bound infinite (anything would pass), a NaN one means nothing. Where the reference itself is NaN or
     * ±inf the entry takes no part (only the rounded reference's own bits pass there), and the Σ|terms| of such an
     * element may well be NaN or +inf.
     */
    private static void checkScale(double[] scale, double[] reference, int n, Tolerance tol) {
        if (scale == null) {
            if (tol.kind() == Tolerance.Kind.ACCUMULATION) {
                throw new ArgumentException("scale", "per-element magnitudes for an accumulation tolerance", "null");
            }
            return;
        }
        if (scale.length != n) {
            throw new ArgumentException("scale", n + " magnitudes (one per element)", scale.length + " values");
        }
        for (int i = 0; i < n; i++) {
            double s = scale[i];
            boolean bad = Double.isFinite(reference[i]) ? !(s >= 0 && s < Double.POSITIVE_INFINITY) : s < 0;
            if (bad) {
                throw new ArgumentException("scale", "magnitudes >= 0 (sum of |terms| per element), finite where the "
                        + "reference is", "scale[" + i + "] = " + s + " for reference " + reference[i]);
            }
        }
    }

    /** Counts over a range of elements; every field merges by sum, maximum or minimum, so chunks combine exactly. */
    private static final class Tally {
        long identical;
        long maxUlp;
        double maxRel;
        long failures;
        /** Lowest failing index in the range, or -1. */
        int firstFailure = -1;

        /** Merges {@code later}, the tally of a range after every range merged so far. */
        void add(Tally later) {
            identical += later.identical;
            maxUlp = Math.max(maxUlp, later.maxUlp);
            maxRel = Math.max(maxRel, later.maxRel); // never NaN: only finite ratios and +infinity enter it
            failures += later.failures;
            if (firstFailure < 0) {
                firstFailure = later.firstFailure;
            }
        }
    }

    /** Compares elements {@code [from, to)}: the per-element rule of both the serial and the parallel path. */
    private static Tally tally(DType dt, double[] got, long[] gotBits, double[] reference, double[] scale, Tolerance tol,
                               int from, int to) {
        Tally t = new Tally();
        for (int i = from; i < to; i++) {
            double r = reference[i];
            double g = got[i];
            // an integer dtype holds whole numbers in its range only: any other reference (NaN, ±inf, a fraction, a
            // value the cast would wrap or saturate) has no encoding, so no result matches it
            boolean encodable = dt.holdsExactly(r);
            long ulp;
            boolean same;
            boolean infiniteRef;
            if (encodable) {
                long refBits = roundBits(dt, r);
                ulp = ulpDistance(dt, gotBits[i], refBits);
                same = gotBits[i] == refBits || (dt.isFloating() && Double.isNaN(g) && Double.isNaN(r));
                infiniteRef = infiniteBits(dt, refBits);
            } else {
                ulp = integerDistance(g, r);
                same = false;
                infiniteRef = false;
            }
            if (same) {
                t.identical++;
            }
            t.maxUlp = Math.max(t.maxUlp, ulp);
            double diff = Math.abs(g - r);
            if (Double.isFinite(diff)) {
                if (r != 0) {
                    t.maxRel = Math.max(t.maxRel, diff / Math.abs(r));
                }
            } else if (!same) {
                // a NaN or infinite result (or reference) the other side does not match: an unbounded error. An
                // identical element (NaN for NaN, or the overflow the rounded reference gives too) records none.
                t.maxRel = Double.POSITIVE_INFINITY;
            }
            boolean ok;
            if (!encodable) {
                ok = false;
            } else {
                switch (tol.kind()) {
                    case BIT_EXACT: ok = same; break;
                    // NaN encodings lie next to ±inf on the ordered line: a NaN passes only against a NaN reference (same)
                    // and ±inf next to the largest finite value: an overflowed result passes only where the reference rounds
                    // to the same infinity (same), never as "one ulp" from a finite one, nor a finite result from an infinity
                    case ULP: ok = same || (Double.isFinite(g) && !Double.isNaN(r) && !infiniteRef && ulp <= tol.maxUlp()); break;
                    default:
                        // an infinite or NaN reference makes the bound infinite or NaN (|1 − ∞| ≤ u·∞ holds): it passes
                        // only its own rounding's bits (same), never through the bound
                        ok = same || (Double.isFinite(g) && Double.isFinite(r)
                                && diff <= tol.outU() * Math.abs(r) + tol.accTerm() * scale[i] + subnormalHalfSpacing(dt));
                        break;
                }
            }
            if (!ok) {
                if (t.failures == 0) {
                    t.firstFailure = i;
                }
                t.failures++;
            }
        }
        return t;
    }

    /**
     * Distance of an integer result from a reference no integer encoding holds: |got − ref| rounded up, and
     * {@code Long.MAX_VALUE} where the reference is NaN or the distance does not fit.
     */
    private static long integerDistance(double got, double ref) {
        double d = Math.abs(got - ref);
        return Double.isNaN(d) || d >= 0x1p63 ? Long.MAX_VALUE : (long) Math.ceil(d);
    }

    /**
     * Compares two results of the same dtype and shape (e.g. custom against vendor) under a bit-exact or ulp rule. An
     * accumulation bound is refused: it scales with the sum of the terms' magnitudes, which two results do not give
     * (taking |expected| would shrink the bound to nothing where the terms cancel); use
     * {@link #compare(Tensor, double[], double[], Tolerance, String)} with the reference's magnitudes.
     *
     * <p>This proves agreement, not correctness: equal bits pass, NaN against NaN included, so two outputs that were
     * both left unwritten in the same poison (0xFF NaNs, or −1 for integers) agree. Compare each result with a
     * reference too where correctness is the question.
     *
     * @throws ArgumentException naming {@code actual}, {@code expected} or {@code tol} where one is null or a tensor is
     *         closed, naming {@code tol} for an accumulation rule, {@code expected} where it is {@code actual} itself or
     *         shares its memory ({@link #sharesMemory}) or has another dtype or shape, and {@code actual} for more than
     *         2^31 − 1 elements
     */
    public static Verdict compare(Tensor actual, Tensor expected, Tolerance tol, String against) {
        if (actual == null) {
            throw new ArgumentException("actual", "a tensor", "null");
        }
        if (expected == null) {
            throw new ArgumentException("expected", "a tensor", "null");
        }
        if (tol == null) {
            throw new ArgumentException("tol", "BIT_EXACT or ULP", "null");
        }
        actual.ensureOpen("actual");
        expected.ensureOpen("expected");
        if (tol.kind() == Tolerance.Kind.ACCUMULATION) {
            throw new ArgumentException("tol", "BIT_EXACT or ULP (an accumulation bound needs the sum of |terms|: pass the "
                    + "reference's magnitudes to compare(Tensor, double[], double[], ...))", tol.toString());
        }
        if (sharesMemory(actual, expected)) {
            // a result compared with itself, or with a view of its own memory, passes whatever it holds
            throw new ArgumentException("expected", "a tensor in memory of its own, apart from actual's",
                    actual == expected ? "actual itself" : expected + ", whose memory overlaps " + actual);
        }
        if (!Arrays.equals(actual.shape(), expected.shape()) || actual.dtype() != expected.dtype()) {
            throw new ArgumentException("expected", actual.dtype() + Arrays.toString(actual.shape()),
                    expected.dtype() + Arrays.toString(expected.shape()));
        }
        elementCount(actual);  // refuses more than 2^31-1 elements, naming actual (expected has as many)
        double[] e = expected.toDoubleArray();  // exact widening, I32 included
        // no scale: neither rule allowed here uses one
        return compare(actual, e, null, tol, against);
    }

    /**
     * Whether two open tensors may read the same bytes: the same tensor, or byte ranges that overlap ({@link
     * Tensor#overlaps}: device tensors by address, host views by their offsets in one buffer).
     */
    static boolean sharesMemory(Tensor a, Tensor b) {
        return a == b || a.overlaps(b);
    }

    private static String index(long[] shape, long flat) {
        long[] idx = new long[shape.length];
        for (int d = shape.length - 1; d >= 0; d--) {
            idx[d] = flat % shape[d];
            flat /= shape[d];
        }
        return Arrays.toString(idx);
    }

    /** The values of raw element bits (zero-extended, as {@link #hostBits} gives them), widened exactly to double. */
    private static double[] values(DType dt, long[] bits) {
        double[] v = new double[bits.length];
        for (int i = 0; i < bits.length; i++) {
            v[i] = dt.valueOfBits(bits[i]);
        }
        return v;
    }

    /** Raw bits of the {@code n} elements of {@code t} ({@link #elementCount}: n is its element count). */
    private static long[] hostBits(Tensor t, int n) {
        long[] bits = new long[n];
        if (t.device().isCpu() && !t.isContiguous()) {
            for (int i = 0; i < n; i++) {
                bits[i] = t.getRawBits(i);
            }
            return bits;
        }
        java.nio.ByteBuffer b = t.device().isCpu() ? t.hostBuffer() : t.toRaw();  // a device tensor in one copy
        for (int i = 0; i < n; i++) {
            switch (t.dtype().bytes()) {
                case 1: bits[i] = b.get(i) & 0xffL; break;
                case 2: bits[i] = b.getShort(2 * i) & 0xffffL; break;
                default: bits[i] = b.getInt(4 * i) & 0xffffffffL; break;
            }
        }
        return bits;
    }

    /**
     * Absolute part of rounding into {@code dt} with gradual underflow: below the normal range the
     * error is bounded by half the subnormal spacing, not by u·|x| (2^-25 for F16, 2^-134 BF16, 2^-150 F32).
     */
    public static double subnormalHalfSpacing(DType dt) {
        return dt.subnormalHalfSpacing();
    }

    /**
     * Bits of {@code v} rounded once to {@code dt}. For an integer dtype {@code v} must be a whole number in its range
     * (the comparison checks that first): anything else wraps or saturates into an unrelated encoding (NaN gives 0).
     */
    public static long roundBits(DType dt, double v) {
        switch (dt) {
            case F32: return Float.floatToRawIntBits((float) v) & 0xffffffffL;
            case F16: return HalfFloats.doubleToHalf(v) & 0xffffL;
            case BF16: return HalfFloats.doubleToBf16(v) & 0xffffL;
            case I8: return ((byte) Math.round(v)) & 0xffL;
            default: return ((int) Math.round(v)) & 0xffffffffL;
        }
    }

    /** Whether {@code bits} encode ±infinity in {@code dt} (integers never). */
    private static boolean infiniteBits(DType dt, long bits) {
        switch (dt) {
            case F32: return (bits & 0x7fffffffL) == 0x7f800000L;
            case F16: return (bits & 0x7fffL) == 0x7c00L;
            case BF16: return (bits & 0x7fffL) == 0x7f80L;
            default: return false;
        }
    }

    /** Distance in ulps between two encodings of {@code dt} (integers: absolute difference). */
    public static long ulpDistance(DType dt, long a, long b) {
        switch (dt) {
            case F32: return Math.abs(ordered((int) a, 32) - ordered((int) b, 32));
            case F16:
            case BF16: return Math.abs(ordered((short) a, 16) - ordered((short) b, 16));
            case I8: return Math.abs((byte) a - (byte) b);
            default: return Math.abs((long) (int) a - (long) (int) b);
        }
    }

    /** Maps sign-magnitude float bits to a monotonic integer line. */
    private static long ordered(int bits, int width) {
        long signBit = 1L << (width - 1);
        long mask = (1L << width) - 1;
        long v = bits & mask;
        return (v & signBit) != 0 ? -(v & (signBit - 1)) : v;
    }
}
