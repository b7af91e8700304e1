package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.Checks;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shared checks of core's {@link Checks} that the ops rely on (runs on the CPU; device-side checks on fake tensors
 * of {@link Fixture#NOWHERE}, never dereferenced).
 */
class ChecksTest {
    // ------------------------------------------------------------------ shape

    @Test void anEmptyLegendLabelsNoDim() {
        try (Tensor t = Tensor.empty(Device.CPU, DType.F32, 2, 3)) {
            ArgumentException e = assertThrows(ArgumentException.class, () -> Checks.shape("b", t, "", 2, 4));
            assertEquals("b", e.argument());
            assertTrue(e.getMessage().contains("shape [2, 4]"), e.getMessage());
            assertFalse(e.getMessage().contains("="), "no dim is labelled: " + e.getMessage());
            ArgumentException wildcard = assertThrows(ArgumentException.class, () -> Checks.shape("b", t, "", -1, 4));
            assertTrue(wildcard.getMessage().contains("shape [*, 4]"), wildcard.getMessage());
        }
    }

    @Test void aLegendLabelsItsDims() {
        try (Tensor t = Tensor.empty(Device.CPU, DType.F32, 2, 3)) {
            ArgumentException e = assertThrows(ArgumentException.class, () -> Checks.shape("out", t, "m, n", 2, 4));
            assertTrue(e.getMessage().contains("shape [m=2, n=4]"), e.getMessage());
            ArgumentException shorter = assertThrows(ArgumentException.class, () -> Checks.shape("out", t, "m", 5, -1));
            assertTrue(shorter.getMessage().contains("shape [m=5, *]"), shorter.getMessage());
            assertDoesNotThrow(() -> Checks.shape("out", t, "", 2, 3));
        }
    }

    // ------------------------------------------------------------------ 32-bit grid-stride indexing

    @Test void gridStrideIndexingNeedsTheBoundPlusTheStrideBelow2To31() {
        long stride = 2112L * 256;
        assertDoesNotThrow(() -> Checks.gridStrideIndexable("a", "elements", Integer.MAX_VALUE - stride, 2112, 256));
        ArgumentException e = assertThrows(ArgumentException.class,
                () -> Checks.gridStrideIndexable("a", "elements", Integer.MAX_VALUE - stride + 1, 2112, 256));
        assertEquals("a", e.argument());
        assertTrue(e.getMessage().contains("32-bit indexing"), e.getMessage());
        // a bound that passes the element-count check (2^31-1) still wraps with any stride
        assertEquals("out", assertThrows(ArgumentException.class,
                () -> Checks.gridStrideIndexable("out", "M·N", Integer.MAX_VALUE, 1, 1)).argument());
        assertDoesNotThrow(() -> Checks.gridStrideIndexable("a", "elements", 0, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> Checks.gridStrideIndexable("a", "elements", 1, 0, 256));
    }

    // ------------------------------------------------------------------ overlap

    @Test void overlapIsAnErrorOnDeviceTensors() {
        try (Fixture f = new Fixture(Device.CPU, 1)) {
            Fixture d = f.deviceSide();
            Tensor[] ov = d.overlappingBytes(DType.F16, new long[] {8}, DType.F32, new long[] {2, 2}, 12);
            ArgumentException e = assertThrows(ArgumentException.class, () -> Checks.noOverlap("out", ov[1], "x", ov[0]));
            assertEquals("out", e.argument());
            assertTrue(e.getMessage().contains("x"), e.getMessage());
            assertEquals("out", assertThrows(ArgumentException.class, () -> Checks.noPartialOverlap("out", ov[1], "x", ov[0])).argument());
            // the last byte of one and the first of the other: still an overlap; adjacent: none
            Tensor[] edge = d.overlappingBytes(DType.I8, new long[] {16}, DType.I8, new long[] {4}, 15);
            assertThrows(ArgumentException.class, () -> Checks.noOverlap("out", edge[1], "a", edge[0]));
            Tensor a = d.random(DType.F32, 4, 4);
            Tensor next = Tensor.borrow(Fixture.NOWHERE, DType.F32, a.address() + a.byteSize(), new long[] {4}, null);
            assertDoesNotThrow(() -> Checks.noOverlap("out", next, "a", a));
            next.close();
            // an identical tensor overlaps in the strict check
            assertThrows(ArgumentException.class, () -> Checks.noOverlap("out", a, "a", a));
            // optional inputs are not checked
            assertDoesNotThrow(() -> Checks.noOverlap("out", a, "bias", null));
        }
    }

    /** Host tensors overlap as views of one buffer (the CPU reference writes out while it reads its inputs). */
    @Test void overlapIsAnErrorOnHostViewsOfOneBuffer() {
        try (Tensor p = Tensor.empty(Device.CPU, DType.F32, 9); Tensor other = Tensor.empty(Device.CPU, DType.F32, 8)) {
            Tensor a = p.strided(new long[] {8}, new long[] {1}, 0);
            Tensor shifted = p.strided(new long[] {8}, new long[] {1}, 1);
            Tensor head = p.strided(new long[] {4}, new long[] {1}, 0);
            Tensor tail = p.strided(new long[] {4}, new long[] {1}, 4);
            assertEquals("out", assertThrows(ArgumentException.class, () -> Checks.noOverlap("out", shifted, "a", a)).argument());
            assertEquals("out", assertThrows(ArgumentException.class, () -> Checks.noPartialOverlap("out", shifted, "a", a)).argument());
            assertThrows(ArgumentException.class, () -> Checks.noOverlap("out", p, "a", p));
            assertDoesNotThrow(() -> Checks.noPartialOverlap("out", a, "a", a));           // exactly the input: in place
            assertDoesNotThrow(() -> Checks.noOverlap("out", tail, "a", head));             // adjacent views of one buffer
            assertDoesNotThrow(() -> Checks.noOverlap("out", other, "a", a));               // another buffer
        }
    }

    @Test void exactlyTheInputIsInPlaceAnyOtherOverlapIsNot() {
        try (Fixture f = new Fixture(Device.CPU, 2)) {
            Fixture d = f.deviceSide();
            Tensor a = d.random(DType.BF16, 3, 5);
            assertDoesNotThrow(() -> Checks.noPartialOverlap("out", a, "a", a));
            Tensor same = Tensor.borrow(Fixture.NOWHERE, DType.BF16, a.address(), new long[] {3, 5}, null);
            assertDoesNotThrow(() -> Checks.noPartialOverlap("out", same, "a", a));
            Tensor flat = Tensor.borrow(Fixture.NOWHERE, DType.BF16, a.address(), new long[] {15}, null);
            assertEquals("out", assertThrows(ArgumentException.class, () -> Checks.noPartialOverlap("out", flat, "a", a)).argument());
            Tensor otherType = Tensor.borrow(Fixture.NOWHERE, DType.F16, a.address(), new long[] {3, 5}, null);
            assertEquals("out", assertThrows(ArgumentException.class, () -> Checks.noPartialOverlap("out", otherType, "a", a)).argument());
            Tensor[] shifted = d.overlappingBytes(DType.BF16, new long[] {3, 5}, DType.BF16, new long[] {3, 5}, 2);
            assertEquals("out", assertThrows(ArgumentException.class,
                    () -> Checks.noPartialOverlap("out", shifted[1], "a", shifted[0])).argument());
            for (Tensor t : new Tensor[] {same, flat, otherType}) {
                t.close();
            }
        }
    }

    @Test void aStridedViewSpansWhatItsStridesReach() {
        try (Fixture f = new Fixture(Device.CPU, 3)) {
            Fixture d = f.deviceSide();
            Tensor parent = d.random(DType.F32, 64);
            // every other element: [4] with stride 2 spans elements 0..6 (28 bytes), though it holds 16 bytes
            Tensor view = parent.strided(new long[] {4}, new long[] {2}, 0);
            Tensor at6 = Tensor.borrow(Fixture.NOWHERE, DType.F32, parent.address() + 24, new long[] {1}, null);
            Tensor at7 = Tensor.borrow(Fixture.NOWHERE, DType.F32, parent.address() + 28, new long[] {1}, null);
            assertThrows(ArgumentException.class, () -> Checks.noOverlap("out", at6, "a", view));
            assertDoesNotThrow(() -> Checks.noOverlap("out", at7, "a", view));
            at6.close();
            at7.close();
        }
    }
}
