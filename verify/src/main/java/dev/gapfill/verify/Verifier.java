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
     * @param actual    the result (copied to the host if on a device)
     * @param reference fp64 values of the exact result, one per element, row-major
     * @param scale     per-element Σ|terms| for ACCUMULATION tolerances (may be null otherwise)
     * @param tol       the rule
     * @param against   label for the report
     */
    public static Verdict compare(Tensor actual, double[] reference, double[] scale, Tolerance tol, String against) {
        long[] gotBits = hostBits(actual);  // one copy of a device tensor; the values come from these bits
        double[] got = values(actual.dtype(), gotBits);
        if (got.length != reference.length) {
            throw new ArgumentException("reference", got.length + " values", reference.length + " values");
        }
        if (tol.kind() == Tolerance.Kind.ACCUMULATION && scale == null) {
            throw new ArgumentException("scale", "per-element magnitudes for an accumulation tolerance", "null");
        }
        DType dt = actual.dtype();
        int n = got.length;
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
            long refBits = roundBits(dt, r);
            long ulp = ulpDistance(dt, gotBits[i], refBits);
            boolean same = gotBits[i] == refBits || (dt.isFloating() && Double.isNaN(got[i]) && Double.isNaN(r));
            if (same) {
                t.identical++;
            }
            t.maxUlp = Math.max(t.maxUlp, ulp);
            double g = got[i];
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
            switch (tol.kind()) {
                case BIT_EXACT: ok = same; break;
                // NaN encodings lie next to ±inf on the ordered line: a NaN passes only against a NaN reference (same)
                // and ±inf next to the largest finite value: an overflowed result passes only where the reference rounds
                // to the same infinity (same), never as "one ulp" from a finite one, nor a finite result from an infinity
                case ULP: ok = same || (Double.isFinite(g) && !Double.isNaN(r) && !infiniteBits(dt, refBits) && ulp <= tol.maxUlp()); break;
                default:
                    ok = same || (Double.isFinite(g) && diff <= tol.outU() * Math.abs(r) + tol.accTerm() * scale[i] + subnormalHalfSpacing(dt));
                    break;
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
     * Compares two results of the same dtype and shape (e.g. custom against vendor) under a bit-exact or ulp rule. An
     * accumulation bound is refused: it scales with the sum of the terms' magnitudes, which two results do not give
     * (taking |expected| would shrink the bound to nothing where the terms cancel); use
     * {@link #compare(Tensor, double[], double[], Tolerance, String)} with the reference's magnitudes.
     */
    public static Verdict compare(Tensor actual, Tensor expected, Tolerance tol, String against) {
        if (tol.kind() == Tolerance.Kind.ACCUMULATION) {
            throw new ArgumentException("tol", "BIT_EXACT or ULP (an accumulation bound needs the sum of |terms|: pass the "
                    + "reference's magnitudes to compare(Tensor, double[], double[], ...))", tol.toString());
        }
        if (!Arrays.equals(actual.shape(), expected.shape()) || actual.dtype() != expected.dtype()) {
            throw new ArgumentException("expected", actual.dtype() + Arrays.toString(actual.shape()),
                    expected.dtype() + Arrays.toString(expected.shape()));
        }
        double[] e = expected.toDoubleArray();  // exact widening, I32 included
        double[] scale = new double[e.length];
        for (int i = 0; i < e.length; i++) {
            scale[i] = Math.abs(e[i]);
        }
        return compare(actual, e, scale, tol, against);
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

    private static long[] hostBits(Tensor t) {
        int n = (int) t.numel();
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

    /** Bits of {@code v} rounded once to {@code dt}. */
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
