package dev.gapfill.core;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HalfFloatsProperties {
    @Test void knownHalfValues() {
        assertEquals(0x3c00, HalfFloats.floatToHalf(1f) & 0xffff);
        assertEquals(0x7bff, HalfFloats.floatToHalf(65504f) & 0xffff);
        assertEquals(0x7c00, HalfFloats.floatToHalf(65520f) & 0xffff, "65520 rounds to +inf");
        assertEquals(0x7bff, HalfFloats.floatToHalf(65519.99f) & 0xffff);
        assertEquals(0x0001, HalfFloats.floatToHalf(0x1p-24f) & 0xffff, "smallest subnormal");
        assertEquals(0x0000, HalfFloats.floatToHalf(0x1p-25f) & 0xffff, "tie to even rounds to zero");
        assertEquals(0x3c00, HalfFloats.floatToHalf(1f + 0x1p-11f) & 0xffff, "tie rounds to even (down)");
        assertEquals(0x3c02, HalfFloats.floatToHalf(1f + 3 * 0x1p-11f) & 0xffff, "tie rounds to even (up)");
        assertEquals(0x8000, HalfFloats.floatToHalf(-0f) & 0xffff);
        assertTrue(Float.isNaN(HalfFloats.halfToFloat(HalfFloats.floatToHalf(Float.NaN))));
    }

    @Test void knownBf16Values() {
        assertEquals(0x3f80, HalfFloats.floatToBf16(1f) & 0xffff);
        assertEquals(0x3f80, HalfFloats.floatToBf16(Float.intBitsToFloat(0x3f808000)) & 0xffff, "tie to even (down)");
        assertEquals(0x3f82, HalfFloats.floatToBf16(Float.intBitsToFloat(0x3f818000)) & 0xffff, "tie to even (up)");
        assertEquals(0x3f81, HalfFloats.floatToBf16(Float.intBitsToFloat(0x3f808001)) & 0xffff, "above the tie rounds up");
    }

    @Test void bf16OverflowBoundaryRoundsToNearestEven() {
        // 0x7f7f8000 is halfway between the largest bf16 (0x7f7f) and infinity; ties go to the even one, infinity
        double tie = Float.intBitsToFloat(0x7f7f8000);
        assertEquals(0x7f80, HalfFloats.doubleToBf16(tie) & 0xffff, "the tie rounds to even: +inf");
        assertEquals(0x7f80, HalfFloats.doubleToBf16(Math.nextUp(tie)) & 0xffff, "above the tie: +inf");
        assertEquals(0x7f7f, HalfFloats.doubleToBf16(Math.nextDown(tie)) & 0xffff, "below the tie: the largest finite");
        assertEquals(0xff80, HalfFloats.doubleToBf16(-tie) & 0xffff);
        assertEquals(0xff80, HalfFloats.doubleToBf16(Math.nextDown(-tie)) & 0xffff, "below the negative tie: -inf");
        assertEquals(0xff7f, HalfFloats.doubleToBf16(Math.nextUp(-tie)) & 0xffff);
        assertEquals(0x7f80, HalfFloats.floatToBf16((float) tie) & 0xffff);
        assertEquals(0x7f80, HalfFloats.doubleToBf16(Float.MAX_VALUE) & 0xffff);
        assertEquals(0x7f80, HalfFloats.doubleToBf16(1e39) & 0xffff);
        // the same double-rounding repair one binade lower still picks the side of d, not the nearer of two finite values
        double lower = Float.intBitsToFloat(0x7f7e8000);
        assertEquals(0x7f7e, HalfFloats.doubleToBf16(lower) & 0xffff, "tie to even (down)");
        assertEquals(0x7f7f, HalfFloats.doubleToBf16(Math.nextUp(lower)) & 0xffff);
        assertEquals(0x7f7e, HalfFloats.doubleToBf16(Math.nextDown(lower)) & 0xffff);
    }

    @Test void halfOverflowBoundaryRoundsToNearestEven() {
        assertEquals(0x7c00, HalfFloats.doubleToHalf(65520.0) & 0xffff, "the tie rounds to even: +inf");
        assertEquals(0x7c00, HalfFloats.doubleToHalf(Math.nextUp(65520.0)) & 0xffff);
        assertEquals(0x7bff, HalfFloats.doubleToHalf(Math.nextDown(65520.0)) & 0xffff, "below the tie: 65504");
        assertEquals(0xfc00, HalfFloats.doubleToHalf(-65520.0) & 0xffff);
        assertEquals(0xfc00, HalfFloats.doubleToHalf(Math.nextDown(-65520.0)) & 0xffff);
        assertEquals(0xfbff, HalfFloats.doubleToHalf(Math.nextUp(-65520.0)) & 0xffff);
        assertEquals(0x7bff, HalfFloats.doubleToHalf(65504.0) & 0xffff);
        assertEquals(0x7c00, HalfFloats.floatToHalf(Math.nextUp(65520f)) & 0xffff);
        assertEquals(0x7bff, HalfFloats.floatToHalf(Math.nextDown(65520f)) & 0xffff);
    }

    @Test void everyHalfRoundTrips() {
        for (int h = 0; h < 0x10000; h++) {
            float f = HalfFloats.halfToFloat((short) h);
            if (Float.isNaN(f)) {
                continue;
            }
            assertEquals(h, HalfFloats.floatToHalf(f) & 0xffff, "half 0x" + Integer.toHexString(h));
            assertEquals(h, HalfFloats.doubleToHalf(f) & 0xffff, "half 0x" + Integer.toHexString(h));
        }
    }

    /** The result is a nearest half: no other half is closer (exact comparison in BigDecimal). */
    @Property(tries = 3000) void halfIsNearest(@ForAll double raw) {
        double d = Math.IEEEremainder(raw, 70000.0);
        short h = HalfFloats.doubleToHalf(d);
        float got = HalfFloats.halfToFloat(h);
        if (Float.isInfinite(got)) {
            assertTrue(Math.abs(d) >= 65520.0);
            return;
        }
        BigDecimal exact = new BigDecimal(d);
        BigDecimal err = exact.subtract(new BigDecimal(got)).abs();
        for (int delta : new int[] {-1, 1}) {
            float nb = HalfFloats.halfToFloat((short) (h + delta));
            if (!Float.isNaN(nb) && !Float.isInfinite(nb)) {
                assertTrue(err.compareTo(exact.subtract(new BigDecimal(nb)).abs()) <= 0, d + " -> " + got + " but " + nb + " is closer");
            }
        }
    }

    @Property(tries = 3000) void bf16IsNearest(@ForAll double raw) {
        double d = Math.IEEEremainder(raw, 1e30);
        short h = HalfFloats.doubleToBf16(d);
        float got = HalfFloats.bf16ToFloat(h);
        BigDecimal exact = new BigDecimal(d);
        BigDecimal err = exact.subtract(new BigDecimal(got)).abs();
        for (int delta : new int[] {-1, 1}) {
            float nb = HalfFloats.bf16ToFloat((short) (h + delta));
            if (!Float.isNaN(nb) && !Float.isInfinite(nb)) {
                assertTrue(err.compareTo(exact.subtract(new BigDecimal(nb)).abs()) <= 0, d + " -> " + got + " but " + nb + " is closer");
            }
        }
    }
}
