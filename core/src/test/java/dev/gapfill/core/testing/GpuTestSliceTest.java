package dev.gapfill.core.testing;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GpuTestSliceTest {
    @Test void unsetKeepsEveryCase() {
        assertTrue(GpuTestSlice.keeps(0, null));
        assertTrue(GpuTestSlice.keeps(71, " "));
    }

    @Test void theSlicesCoverTheGridExactlyOnce() {
        List<Integer> seen = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            for (int c = 0; c < 72; c++) {
                if (GpuTestSlice.keeps(c, i + "/3")) {
                    seen.add(c);
                }
            }
        }
        seen.sort(null);
        assertEquals(72, seen.size());
        for (int c = 0; c < 72; c++) {
            assertEquals(c, seen.get(c));
        }
        assertTrue(GpuTestSlice.keeps(70, "1/3"));
        assertFalse(GpuTestSlice.keeps(70, "2/3"));
    }

    @Test void badSpecsNameTheProperty() {
        for (String bad : new String[] {"3/3", "-1/3", "0/0", "1", "a/b", "1/2/3"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GpuTestSlice.keeps(0, bad), bad);
            assertTrue(e.getMessage().startsWith(GpuTestSlice.PROPERTY + ": expected i/n"), e.getMessage());
        }
    }
}
