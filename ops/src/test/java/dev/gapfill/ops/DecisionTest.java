package dev.gapfill.ops;

import dev.gapfill.core.DType;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.ops.GroupedGemm.WeightLayout;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A decision's reason built on first read, once, and equal to the same text given eagerly. */
class DecisionTest {

    @Test void aLazyReasonIsBuiltOnFirstReadAndOnlyOnce() {
        AtomicInteger built = new AtomicInteger();
        Decision d = Decision.lazy(Backend.CUSTOM, "w64s6", () -> "rows " + built.incrementAndGet());
        assertEquals(Backend.CUSTOM, d.backend());
        assertEquals("w64s6", d.variant());
        assertEquals(0, built.get(), "backend and variant do not build the reason");
        assertEquals("rows 1", d.reason());
        assertEquals("rows 1", d.reason());
        assertEquals("CUSTOM/w64s6 (rows 1)", d.toString());
        assertEquals(1, built.get());
    }

    @Test void lazyAndEagerDecisionsWithTheSameTextAreEqual() {
        Decision eager = new Decision(Backend.VENDOR, "cublas_loop", "large groups");
        Decision lazy = Decision.lazy(Backend.VENDOR, "cublas_loop", () -> "large " + "groups");
        assertEquals(eager, lazy);
        assertEquals(eager.hashCode(), lazy.hashCode());
        assertNotEquals(eager, Decision.lazy(Backend.VENDOR, "cublas_loop", () -> "small groups"));
        assertNotEquals(eager, new Decision(Backend.CUSTOM, "cublas_loop", "large groups"));
        assertNotEquals(eager, new Decision(Backend.VENDOR, "cublas_grouped", "large groups"));
    }

    @Test void aDecisionNamesAConcreteBackendAndEveryPart() {
        assertThrows(IllegalArgumentException.class, () -> new Decision(Backend.AUTO, "x", "y"));
        assertThrows(IllegalArgumentException.class, () -> Decision.lazy(Backend.AUTO, "x", () -> "y"));
        assertThrows(NullPointerException.class, () -> new Decision(Backend.CUSTOM, "x", (String) null));
        assertThrows(NullPointerException.class, () -> Decision.lazy(Backend.CUSTOM, "x", null));
        assertThrows(NullPointerException.class, () -> new Decision(Backend.CUSTOM, null, "y"));
        Decision returnsNull = Decision.lazy(Backend.CUSTOM, "x", () -> null);
        assertThrows(NullPointerException.class, returnsNull::reason);
    }

    @Test void theGroupedDecisionsFormatTheirReasonOnlyWhenRead() {
        // E=64 top-8 T=1 gate-up on an H100: the sm_90 decode rule, whose reason takes String.format
        GroupedGemmHeuristics.Shape s = new GroupedGemmHeuristics.Shape(64, 8, 2048, 2048, true, DType.BF16, WeightLayout.KN);
        DeviceInfo h100 = DeviceInfo.h100ForTests();
        Decision auto = GroupedGemmHeuristics.decide(s, h100, Backend.AUTO);
        Decision custom = GroupedGemmHeuristics.decide(s, h100, Backend.CUSTOM);
        assertEquals(auto.variant(), custom.variant());
        assertTrue(auto.reason().startsWith("sm_90, 1.0 rows per active group"), auto.reason());
        assertEquals("CUSTOM requested; " + auto.reason(), custom.reason());
    }
}
