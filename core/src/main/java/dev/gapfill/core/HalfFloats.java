package dev.gapfill.core;

/**
 * IEEE binary16 and bfloat16 conversions that round to nearest, ties to even, from float and from
 * double (the double path rounds once, so the CPU reference never double-rounds).
 * JavaCPP's {@code Bfloat16Indexer.fromFloat} truncates; do not use it for data.
 */
public final class HalfFloats {
    private HalfFloats() {}

    /** bfloat16 bits of {@code f}, rounded to nearest even; NaN stays a quiet NaN. */
    public static short floatToBf16(float f) {
        int bits = Float.floatToRawIntBits(f);
        if ((bits & 0x7fffffff) > 0x7f800000) {
            return (short) ((bits >>> 16) | 0x40);
        }
        int lsb = (bits >>> 16) & 1;
        bits += 0x7fff + lsb;
        return (short) (bits >>> 16);
    }

    public static float bf16ToFloat(short h) {
        return Float.intBitsToFloat((h & 0xffff) << 16);
    }

    /** bfloat16 bits of {@code d}, rounded once to nearest even. */
    public static short doubleToBf16(double d) {
        if (Double.isNaN(d)) {
            return (short) 0x7fc0;
        }
        float f = (float) d; // nearest float; fix a possible double rounding below
        short r = floatToBf16(f);
        // Double rounding is only possible when f lies exactly halfway between two bf16 values.
        int fb = Float.floatToRawIntBits(f);
        if ((fb & 0xffff) == 0x8000 && (double) f != d && !Float.isInfinite(f)) {
            // f is a tie, d is not: pick the neighbour on d's side of f. Comparing magnitudes, not distances to the
            // neighbours: above the largest finite bf16 the upper neighbour is infinity (overflow), at any distance.
            short down = (short) (fb >>> 16);          // toward zero (sign-magnitude)
            short up = (short) ((fb >>> 16) + 1);      // away from zero; 0x7f80 / 0xff80 past the largest finite
            r = Math.abs(d) > Math.abs(f) ? up : down;
        }
        return r;
    }

    /** binary16 bits of {@code f}, rounded to nearest even (overflow to infinity). */
    public static short floatToHalf(float f) {
        return doubleToHalf(f);
    }

    /** binary16 bits of {@code d}, rounded once to nearest even (overflow to infinity). */
    public static short doubleToHalf(double d) {
        long bits = Double.doubleToRawLongBits(d);
        int sign = (int) ((bits >>> 48) & 0x8000);
        if (Double.isNaN(d)) {
            return (short) 0x7e00;
        }
        double a = Math.abs(d);
        if (a >= 65520.0) { // rounds to infinity
            return (short) (sign | 0x7c00);
        }
        if (a < 0x1p-14) {
            // subnormal: value = m * 2^-24, m in [0, 1024]
            double m = a * 0x1p24;
            long r = Math.round(m);
            if (Math.abs(m - Math.floor(m) - 0.5) == 0.0) { // exact tie: to even
                long fl = (long) Math.floor(m);
                r = (fl & 1) == 0 ? fl : fl + 1;
            }
            return (short) (sign | (int) r); // r == 1024 gives the smallest normal, correctly
        }
        int exp = Math.getExponent(a); // a in [2^exp, 2^(exp+1))
        double scaled = a * Math.pow(2, 10 - exp); // [1024, 2048)
        double fl = Math.floor(scaled);
        double frac = scaled - fl;
        long m = (long) fl;
        if (frac > 0.5 || (frac == 0.5 && (m & 1) == 1)) {
            m++;
        }
        if (m == 2048) {
            m = 1024;
            exp++;
        }
        if (exp > 15) {
            return (short) (sign | 0x7c00);
        }
        return (short) (sign | ((exp + 15) << 10) | (int) (m - 1024));
    }

    public static float halfToFloat(short h) {
        int s = (h >>> 15) & 1;
        int e = (h >>> 10) & 0x1f;
        int m = h & 0x3ff;
        float v;
        if (e == 0) {
            v = m * 0x1p-24f;
        } else if (e == 31) {
            v = m == 0 ? Float.POSITIVE_INFINITY : Float.NaN;
        } else {
            v = Float.intBitsToFloat(((e - 15 + 127) << 23) | (m << 13));
        }
        return s == 1 ? -v : v;
    }
}
