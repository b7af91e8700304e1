package dev.gapfill.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DTypeTest {
    /** Known bit patterns, zero-extended as Tensor.getRawBits gives them, against their values written out. */
    @Test void valueOfBitsDecodesEveryDtype() {
        assertEquals(1.5, DType.F32.valueOfBits(0x3fc00000L));
        assertEquals(-0x1p-149, DType.F32.valueOfBits(0x80000001L));  // smallest negative subnormal
        assertEquals(1.5, DType.F16.valueOfBits(0x3e00L));
        assertEquals(65504.0, DType.F16.valueOfBits(0x7bffL));
        assertEquals(-0x1p-24, DType.F16.valueOfBits(0x8001L));        // smallest negative subnormal
        assertEquals(1.5, DType.BF16.valueOfBits(0x3fc0L));
        assertEquals(-2.0, DType.BF16.valueOfBits(0xc000L));
        assertEquals(-1.0, DType.I8.valueOfBits(0xffL));
        assertEquals(127.0, DType.I8.valueOfBits(0x7fL));
        assertEquals(-1.0, DType.I32.valueOfBits(0xffffffffL));
        assertEquals(Integer.MIN_VALUE, DType.I32.valueOfBits(0x80000000L));
        assertEquals(Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(DType.F16.valueOfBits(0x8000L)));
        assertTrue(Double.isNaN(DType.BF16.valueOfBits(0x7fc1L)));
        assertEquals(Double.NEGATIVE_INFINITY, DType.F16.valueOfBits(0xfc00L));
    }

    @Test void integerDtypesHoldWholeNumbersInRangeOnly() {
        assertTrue(DType.I8.holdsExactly(-128) && DType.I8.holdsExactly(127) && DType.I32.holdsExactly(Integer.MIN_VALUE));
        for (double v : new double[] {128, -129, 0.5, Double.NaN, Double.POSITIVE_INFINITY}) {
            assertFalse(DType.I8.holdsExactly(v), "I8 " + v);
        }
        for (double v : new double[] {2147483648.0, -2147483649.0, -0.5, Double.NaN}) {
            assertFalse(DType.I32.holdsExactly(v), "I32 " + v);
        }
        assertTrue(DType.F16.holdsExactly(0.1) && DType.F32.holdsExactly(Double.NaN), "float dtypes round");
    }
}
