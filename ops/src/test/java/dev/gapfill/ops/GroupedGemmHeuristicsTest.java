package dev.gapfill.ops;

import dev.gapfill.core.DType;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.ops.GroupedGemm.WeightLayout;
import dev.gapfill.ops.GroupedGemmHeuristics.Shape;
import dev.gapfill.ops.GroupedGemmHeuristics.Variant;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** CPU tests of the grouped GEMM dispatch (the rows of the H100 harness run at 69d1975 the thresholds cite). */
class GroupedGemmHeuristicsTest {
    private static final DeviceInfo H100 = DeviceInfo.h100ForTests();
    private static final DeviceInfo A100 = DeviceInfo.a100ForTests();

    /** A MoE projection: T tokens, top-k routing, gate-up (K = hidden, N = 2·I, SwiGLU) or down (K = I, N = hidden). */
    private static Shape moe(int e, int topk, int hidden, int inter, int tokens, boolean gateUp) {
        return new Shape(e, (long) tokens * topk, gateUp ? hidden : inter, gateUp ? 2 * inter : hidden, gateUp, DType.BF16, WeightLayout.KN);
    }

    @Test void fineGrainedDecodeAndPrefillRunCustom() {
        // E=64 top-8 T=1 gate-up: 8 groups x 16 col blocks = 128 tiles < 264 -> m16 (46 vs 52 us)
        Decision d = GroupedGemmHeuristics.decide(moe(64, 8, 2048, 1024, 1, true), H100, Backend.AUTO);
        assertEquals(Backend.CUSTOM, d.backend());
        assertEquals("m16", d.variant());
        // T=16: 1024 tiles -> m64 (196 vs 210 us)
        assertEquals("m64", GroupedGemmHeuristics.decide(moe(64, 8, 2048, 1024, 16, true), H100, Backend.AUTO).variant());
        // T=512 (64 rows per group): custom m64 295 us vs loop 579 us
        d = GroupedGemmHeuristics.decide(moe(64, 8, 2048, 1024, 512, false), H100, Backend.AUTO);
        assertEquals(Backend.CUSTOM, d.backend());
        assertEquals("m64", d.variant());
        // E=128 T=4096: 256 rows per group, custom 1205 vs loop 1415 us
        assertEquals(Backend.CUSTOM, GroupedGemmHeuristics.decide(moe(128, 8, 2048, 768, 4096, true), H100, Backend.AUTO).backend());
    }

    @Test void coarseExpertsGoToCublas() {
        // E=8 top-2 T=2048: 512 rows per group, loop 1969 vs custom 5045 us
        Decision d = GroupedGemmHeuristics.decide(moe(8, 2, 4096, 14336, 2048, true), H100, Backend.AUTO);
        assertEquals(Backend.VENDOR, d.backend());
        assertTrue(d.reason().contains("rows per group"), d.reason());
        // E=8 top-2 T=1: 2 rows on 8 groups, loop 101 vs custom 133 us (down)
        assertEquals(Backend.VENDOR, GroupedGemmHeuristics.decide(moe(8, 2, 4096, 14336, 1, false), H100, Backend.AUTO).backend());
        // E=8 top-2 T=128: 32 rows per group, custom 357 vs loop 381 us (down)
        assertEquals(Backend.CUSTOM, GroupedGemmHeuristics.decide(moe(8, 2, 4096, 14336, 128, false), H100, Backend.AUTO).backend());
    }

    @Test void forcedBackendsAreHonoured() {
        Shape s = moe(8, 2, 4096, 14336, 2048, true);
        assertEquals(Backend.CUSTOM, GroupedGemmHeuristics.decide(s, H100, Backend.CUSTOM).backend());
        assertEquals(Backend.VENDOR, GroupedGemmHeuristics.decide(moe(64, 8, 2048, 1024, 1, true), H100, Backend.VENDOR).backend());
    }

    @Test void unsupportedShapesAreNamed() {
        Shape oddK = new Shape(4, 10, 70, 64, false, DType.F16, WeightLayout.KN);
        assertNotNull(GroupedGemmHeuristics.customUnsupported(oddK, H100));
        assertEquals(Backend.VENDOR, GroupedGemmHeuristics.decide(oddK, H100, Backend.AUTO).backend());
        Decision forced = GroupedGemmHeuristics.decide(oddK, H100, Backend.CUSTOM);
        assertEquals("unsupported", forced.variant());
        assertTrue(forced.reason().contains("K % 8"), forced.reason());
        // SwiGLU needs both halves in 16-byte chunks: N = 40 -> I = 20 is not
        assertNotNull(GroupedGemmHeuristics.customUnsupported(new Shape(4, 10, 72, 40, true, DType.F16, WeightLayout.NK), H100));
        assertNull(GroupedGemmHeuristics.customUnsupported(new Shape(4, 10, 72, 40, false, DType.F16, WeightLayout.NK), H100));
        assertNotNull(GroupedGemmHeuristics.customUnsupported(new Shape(5000, 10, 64, 64, false, DType.F16, WeightLayout.KN), H100));
        DeviceInfo volta = new DeviceInfo(0, "Tesla V100", 7, 0, 80, 6L << 20, 96L << 10, 96L << 10, 16L << 30, 13000, 13000, 130100, -1);
        assertNotNull(GroupedGemmHeuristics.customUnsupported(moe(64, 8, 2048, 1024, 1, true), volta));
    }

    @Test void sharedMemoryAndOccupancyFitTheDevices() {
        for (DeviceInfo info : new DeviceInfo[] {H100, A100}) {
            for (WeightLayout l : WeightLayout.values()) {
                for (Variant v : Variant.values()) {
                    int smem = v.smemBytes(l, GroupedGemmHeuristics.MAX_CUSTOM_GROUPS);
                    assertTrue(smem <= info.smemPerBlockOptin(), v + " " + l + " " + smem);
                    int ctas = GroupedGemmHeuristics.ctasPerSm(v, v.smemBytes(l, 64), info);
                    assertTrue(ctas >= 1 && ctas <= v.maxCtasPerSm);
                    assertTrue((long) ctas * (v.smemBytes(l, 64) + 1024) <= info.smemPerSm());
                }
            }
        }
        // m16 at G=64: 4 stages x (16x72 + 64x72) x 2 B + 4 x (65 + 16) = 46404 B -> 4 CTAs on a 228 KiB SM
        assertEquals(46404, Variant.M16.smemBytes(WeightLayout.KN, 64));
        assertEquals(4, GroupedGemmHeuristics.ctasPerSm(Variant.M16, 46404, H100));
    }

    @Property(tries = 200)
    void gridIsPersistentAndNeverLargerThanTheTiles(@ForAll @IntRange(min = 1, max = 300) int groups,
                                                    @ForAll @IntRange(min = 1, max = 100_000) int rows,
                                                    @ForAll @IntRange(min = 1, max = 600) int n8, @ForAll boolean swiglu) {
        Shape s = new Shape(groups, rows, 512, 16 * n8, swiglu, DType.F16, WeightLayout.KN);
        for (Variant v : Variant.values()) {
            int grid = GroupedGemmHeuristics.grid(s, v, H100);
            int full = H100.smCount() * GroupedGemmHeuristics.ctasPerSm(v, v.smemBytes(WeightLayout.KN, groups), H100);
            assertTrue(grid >= 1 && grid <= full);
            int cols = swiglu ? v.bn / 2 : v.bn;
            long maxTiles = ((long) (rows + v.bm - 1) / v.bm + groups) * ((s.nOut() + cols - 1) / cols);
            assertEquals(Math.min(full, maxTiles), grid);
        }
        Decision d = GroupedGemmHeuristics.decide(s, H100, Backend.AUTO);
        assertTrue(d.reason() != null && !d.reason().isBlank());
    }
}
