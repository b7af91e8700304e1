package dev.gapfill.core;

import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.Pointer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The argument slots cuLaunchKernel reads: each slot holds exactly this launch's value, whatever an earlier one left. */
class KernelArgsTest {
    private static long slotBits(KernelArgs a, int i) {
        Pointer p = a.params().get(i);
        return new BytePointer(p).capacity(8).getLong(0);
    }

    @Test void fourByteArgumentsLeaveNoEarlierBytesInTheirSlot() {
        KernelArgs.begin().i64(-1L).i64(-1L);
        KernelArgs a = KernelArgs.begin().i32(5).f32(1.0f);
        assertEquals(2, a.count());
        assertEquals(5L, slotBits(a, 0));
        assertEquals(Float.floatToRawIntBits(1.0f) & 0xffffffffL, slotBits(a, 1));
        assertEquals(-1L, slotBits(KernelArgs.begin().i64(-1L), 0));
    }

    @Test void eachArgumentKeepsItsSizeForTheCheckAgainstTheKernel() {
        KernelArgs a = KernelArgs.begin().ptr(null).i64(7L).i32(3).f32(2f);
        assertEquals(4, a.count());
        assertEquals(8, a.size(0));
        assertEquals(8, a.size(1));
        assertEquals(4, a.size(2));
        assertEquals(4, a.size(3));
        assertEquals("[8, 8, 4, 4]", a.describeSizes());
        assertEquals("[]", KernelArgs.begin().describeSizes());
    }
}
