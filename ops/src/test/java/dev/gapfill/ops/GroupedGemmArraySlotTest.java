package dev.gapfill.ops;

import dev.gapfill.core.Resources;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The capacities of the grouped-batched call's pooled host arrays (the pool itself runs on the GPU: GroupedGemmGpuTest). */
class GroupedGemmArraySlotTest {
    @Test void capacitiesArePowersOfTwoFrom64ThatHoldTheCall() {
        assertEquals(64, GroupedGemm.ArraySlot.capacityFor(1));
        assertEquals(64, GroupedGemm.ArraySlot.capacityFor(64));
        assertEquals(128, GroupedGemm.ArraySlot.capacityFor(65));
        assertEquals(4096, GroupedGemm.ArraySlot.capacityFor(GroupedGemmHeuristics.MAX_CUSTOM_GROUPS));
        assertEquals(1 << 29, GroupedGemm.ArraySlot.capacityFor(1 << 29));
        assertEquals((1 << 29) + 1, GroupedGemm.ArraySlot.capacityFor((1 << 29) + 1), "no power of two past 2^29: it would wrap");
        for (int g = 1; g < 70_000; g += 97) {
            int c = GroupedGemm.ArraySlot.capacityFor(g);
            assertTrue(c >= g && c < 2 * Math.max(g, 64) && Integer.bitCount(c) == 1, g + " groups: " + c);
        }
    }

    @Test void thePoolIsAnOpCacheThatResourcesReleaseEmpties() {
        assertEquals(0, (int) Resources.cacheSizes(null).get("grouped_gemm grouped-batched host arrays"), "registered, empty without a GPU call");
        assertEquals(0, new OpCaches.GroupedGemmArraySlots().size(dev.gapfill.core.Device.CPU));
        assertEquals(0, new OpCaches.GroupedGemmArraySlots().release(dev.gapfill.core.Device.CPU));
    }
}
