package dev.gapfill.core;

/** Element types a {@link Tensor} can hold. */
public enum DType {
    F32(4, true), F16(2, true), BF16(2, true), I8(1, false), I32(4, false);

    private final int bytes;
    private final boolean floating;

    DType(int bytes, boolean floating) {
        this.bytes = bytes;
        this.floating = floating;
    }

    /** Size of one element in bytes. */
    public int bytes() { return bytes; }

    /** True for F32, F16 and BF16. */
    public boolean isFloating() { return floating; }

    /**
     * The value of one element's raw bits (little-endian, zero-extended to a long, as {@link Tensor#getRawBits} gives
     * them), widened exactly to double: F16/BF16/F32 through float, I8 and I32 as signed integers.
     */
    public double valueOfBits(long bits) {
        switch (this) {
            case F32: return Float.intBitsToFloat((int) bits);
            case F16: return HalfFloats.halfToFloat((short) bits);
            case BF16: return HalfFloats.bf16ToFloat((short) bits);
            case I8: return (byte) bits;
            default: return (int) bits;
        }
    }

    /**
     * Integer dtypes: whether {@code v} is a whole number in the dtype's range, the only values an element holds exactly
     * (a cast would truncate a fraction, wrap I8, saturate I32 and turn NaN into 0). Float dtypes: true (they round).
     */
    public boolean holdsExactly(double v) {
        switch (this) {
            case I8: return v >= Byte.MIN_VALUE && v <= Byte.MAX_VALUE && v == Math.rint(v);
            case I32: return v >= Integer.MIN_VALUE && v <= Integer.MAX_VALUE && v == Math.rint(v);
            default: return true;
        }
    }

    /**
     * Unit roundoff u of the format (half the distance from 1.0 to the next representable value):
     * 2^-24 for F32, 2^-11 for F16, 2^-8 for BF16, 0 for integers (exact).
     */
    public double unitRoundoff() {
        switch (this) {
            case F32: return 0x1p-24;
            case F16: return 0x1p-11;
            case BF16: return 0x1p-8;
            default: return 0.0;
        }
    }

    /**
     * Absolute part of rounding into this dtype with gradual underflow: below the normal range the error is bounded
     * by half the subnormal spacing, not by u·|x| (2^-25 for F16, 2^-134 BF16, 2^-150 F32; 0 for integers).
     */
    public double subnormalHalfSpacing() {
        switch (this) {
            case F16: return 0x1p-25;
            case BF16: return 0x1p-134;
            case F32: return 0x1p-150;
            default: return 0.0;
        }
    }
}
