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

/** CPU tests of the grouped GEMM dispatch (the rows of the H100 harness run the thresholds cite). */
class GroupedGemmHeuristicsTest {
    private static final DeviceInfo H100 = DeviceInfo.h100ForTests();
    private static final DeviceInfo A100 = DeviceInfo.a100ForTests();

    /** A MoE projection: T tokens, top-k routing, gate-up (K = hidden, N = 2·I, SwiGLU) or down (K = I, N = hidden). */
    private static Shape moe(int e, int topk, int hidden, int inter, int tokens, boolean gateUp) {
        return moe(e, topk, hidden, inter, tokens, gateUp, WeightLayout.KN);
    }

    private static Shape moe(int e, int topk, int hidden, int inter, int tokens, boolean gateUp, WeightLayout l) {
        return new Shape(e, (long) tokens * topk, gateUp ? hidden : inter, gateUp ? 2 * inter : hidden, gateUp, DType.BF16, l);
    }

    private static String auto(Shape s) {
        return auto(s, H100);
    }

    private static String auto(Shape s, DeviceInfo info) {
        return GroupedGemmHeuristics.decide(s, info, Backend.AUTO).variant();
    }

    // Every expectation below is the fastest path, or one within 5 % of it, in the H100 harness run the
    // thresholds cite (bf16 medians in µs; cuda-native/dev/grouped_gemm/h100-run1.txt).

    // The sm_80 rules (h100-run1.txt, before the mma tiles resolved their copies once per tile)
    @Test void decodeRunsTheStreamingTileWhereItWinsOffHopper() {
        assertEquals("d16", auto(moe(64, 8, 2048, 1024, 1, false), A100));                    // down T=1: d16 18.3, m16 19.4, loop 90
        assertEquals("d16", auto(moe(64, 8, 2048, 1024, 8, false), A100));                    // down T=8: d16 73.8, m16 73.0
        assertEquals("d16", auto(moe(64, 8, 2048, 1024, 32, false), A100));                   // down T=32: d16 99.8, m64 104.5
        assertEquals("d16", auto(moe(64, 8, 2048, 1024, 1, true, WeightLayout.NK), A100));    // gate-up NK T=1: d16 31.7, m16 35.8
        // coarse down T=1 (H100: d16 113, loop 116): on the A100 d16 fits one CTA per SM, so its 128 tiles are 1.19
        // waves of 108 CTAs and the wave rule takes m16
        assertEquals("m16", auto(moe(8, 2, 4096, 14336, 1, false), A100));
        // E=160 top-6 T=1 gate-up NK: on the H100's 264 d16 CTAs its 288 tiles are 1.09 waves -> m16 (83.6 vs d16 95.5);
        // on the A100's 108 (one per SM) they are 2.7 waves, and the rule keeps d16
        assertEquals("d16", auto(moe(160, 6, 5120, 1536, 1, true, WeightLayout.NK), A100));
    }

    // sm_90 up to 4 rows per active group: m16 where the 64x128 tiles are fewer than half the SMs, w64s6 where they fit
    // one wave of one CTA per SM, w64 above (H100 harness h100-decode-w64.txt and h100-w64s6.txt, bf16 µs)
    @Test void hopperDecodeRunsTheWgmmaTilesOrM16WithFewTiles() {
        assertEquals("m16", auto(moe(8, 2, 4096, 14336, 1, false)));                    // 64 tiles: m16 92.6, w64 109.6
        assertEquals("w64s6", auto(moe(64, 8, 2048, 1024, 1, true)));                   // 128 tiles: w64s6 29.0, w64 31.1, m16 35.0
        assertEquals("w64s6", auto(moe(64, 8, 2048, 1024, 1, true, WeightLayout.NK)));  // w64s6 30.7, m16 32.8, w64 33.8
        assertEquals("w64s6", auto(moe(64, 8, 2048, 1024, 1, false)));                  // 128 tiles: w64s6 17.1, w64 18.0
        assertEquals("w64s6", auto(moe(128, 8, 2048, 768, 1, true)));                   // 96 tiles: w64s6 24.2, w64 28.1
        assertEquals("w64s6", auto(moe(128, 8, 2048, 768, 1, false)));                  // 128 tiles: w64s6 14.6, w64 15.3
        assertEquals("w64", auto(moe(160, 6, 5120, 1536, 1, true)));                    // 144 tiles: w64 71.6, w64s6 91.3, m16 85.3
        assertEquals("w64", auto(moe(160, 6, 5120, 1536, 1, true, WeightLayout.NK)));   // w64 77.4, m16 78.9, w64s6 95.6
        assertEquals("w64", auto(moe(160, 6, 5120, 1536, 1, false)));                   // 240 tiles: w64 37.8, w64s6 38.9
        assertEquals("w64", auto(moe(8, 2, 4096, 14336, 1, true)));                     // 448 tiles: w64 160.3, w64s6 167.8
        assertEquals("w64", auto(moe(8, 2, 4096, 14336, 8, false)));                    // 256 tiles: w64 266.9, w64s6 268.4
        assertEquals("w64", auto(moe(64, 8, 2048, 1024, 8, true)));                     // w64 132.7, w64s6 139.6, m64 144.7
        assertEquals("w64", auto(moe(64, 8, 2048, 1024, 32, false)));                   // w64 94.1, m64 100.4
        assertEquals("w64", auto(moe(8, 2, 4096, 14336, 32, false)));                   // 8 rows per active group: w64 as before
        Decision d = GroupedGemmHeuristics.decide(moe(8, 2, 4096, 14336, 1, false), H100, Backend.AUTO);
        assertTrue(d.reason().contains("-> m16") && d.reason().contains("sm_90") && d.reason().contains("~64 64x128 tiles"), d.reason());
        d = GroupedGemmHeuristics.decide(moe(64, 8, 2048, 1024, 1, true), H100, Backend.AUTO);
        assertTrue(d.reason().contains("-> w64s6"), d.reason());
    }

    @Test void kNSwiGluKeepsTheMmaTilesOffHopper() {
        assertEquals("m16", auto(moe(64, 8, 2048, 1024, 1, true), A100));     // T=1: m16 37.2, d16 44.8, m64 50.0
        assertEquals("m64", auto(moe(64, 8, 2048, 1024, 8, true), A100));     // T=8 (1 row per active group): m64 149, m16 170, d16 215
        assertEquals("m64", auto(moe(8, 2, 4096, 14336, 1, true), A100));     // coarse T=1: m64 194, loop 200 (was the loop)
        assertEquals("m16", auto(moe(128, 8, 2048, 768, 1, true), A100));     // m16 28.7, d16 38.9
        assertEquals("m64", auto(moe(64, 8, 2048, 1024, 512, true), A100));   // T=512 (64 rows/group): m64 290, grouped 338
    }

    // The sm_80 rules (A100 and every non-Hopper part) keep the mma tiles; their thresholds are the H100 rows of h100-run1.txt.
    @Test void midRowsRunM64OffHopper() {
        assertEquals("m64", auto(moe(64, 8, 2048, 1024, 128, false), A100));   // down T=128 (16 rows/group): m64 110.9, d16 119.6
        assertEquals("m64", auto(moe(8, 2, 4096, 14336, 32, false), A100));    // coarse down T=32 (8 rows): m64 341, d16 372
        assertEquals("m64", auto(moe(8, 2, 4096, 14336, 128, true), A100));    // coarse gate-up T=128: m64 719, grouped 721
        // small per-expert GEMMs stay custom at any row count: E=64 down T=2048 m64 419 vs grouped 449 vs loop 716
        assertEquals("m64", auto(moe(64, 8, 2048, 1024, 2048, false), A100));
        assertEquals("m64", auto(moe(128, 8, 2048, 768, 8192, false), A100));  // m64 1176, grouped 1349, loop 1745
    }

    // sm_90: above 4 rows per active group the wgmma tiles run, and only coarse MoE with large groups goes to cuBLAS
    // (H100 wgmma harness run 4, bf16 µs; cuda-native/dev/grouped_gemm/h100-wgmma-sweep.txt).
    @Test void hopperRunsTheWgmmaTiles() {
        assertEquals("w64", auto(moe(64, 8, 2048, 1024, 128, false)));      // 16 rows: w64 98, w128n2 103, m64 112
        assertEquals("w64", auto(moe(64, 8, 2048, 1024, 128, true)));       // w64 187, w128n2 206, grouped 266
        assertEquals("w64", auto(moe(128, 8, 2048, 768, 512, true)));       // 32 rows: w64 282, w128n2 305
        assertEquals("w64", auto(moe(8, 2, 4096, 14336, 128, true)));       // coarse, 32 rows: w64 634, loop 759, grouped 692
        assertEquals("w64", auto(moe(64, 8, 2048, 1024, 512, true)));       // 64 rows: w64 202, w128n2 209
        assertEquals("w64", auto(moe(64, 8, 2048, 1024, 512, false)));      // w64 110, w128n2 113
        assertEquals("w64", auto(moe(128, 8, 2048, 768, 2048, false)));     // 128 rows but K = 768: w64 215, w128n2 236
        assertEquals("w128n2", auto(moe(128, 8, 2048, 768, 8192, false)));  // 512 rows, K = 768: w128n2 560, w64 634
        assertEquals("w128n2", auto(moe(128, 8, 2048, 768, 2048, true)));   // 128 rows, K = 2048: w128n2 363, w64 379
        assertEquals("w128n2", auto(moe(64, 8, 2048, 1024, 2048, true)));   // w128n2 367, w64 409, grouped 699, loop 881
        assertEquals("w128n2", auto(moe(160, 6, 5120, 1536, 2048, false))); // 77 rows: w128n2 941, w64 994, grouped 1435
        assertEquals("w128n2", auto(moe(64, 8, 2048, 1024, 8192, false)));  // w128n2 641, loop 1408
        assertEquals("w128n2", auto(moe(64, 8, 2048, 1024, 8192, true)));   // w128n2 1206, loop 1828
        assertEquals("w128n2", auto(moe(160, 6, 5120, 1536, 8192, true)));  // w128n2 3855, loop 5682
        assertEquals("w128n2", auto(moe(8, 2, 4096, 14336, 512, true)));    // coarse, 128 rows: w128n2 716, loop 1063
        assertEquals("w128n2", auto(moe(8, 2, 4096, 14336, 512, false)));   // w128n2 442, loop 462
        assertEquals("cublas_loop", auto(moe(8, 2, 4096, 14336, 2048, true)));   // 512 rows: loop 2066, w128n2 2181
        assertEquals("cublas_loop", auto(moe(8, 2, 4096, 14336, 2048, false)));  // loop 799, w128n2 1136
        Decision d = GroupedGemmHeuristics.decide(moe(64, 8, 2048, 1024, 2048, true), H100, Backend.AUTO);
        assertTrue(d.reason().contains("w128n2") && d.reason().contains("sm_90"), d.reason());
    }

    @Test void aForcedVariantRunsAndHopperTilesStayOnHopper() {
        Shape s = moe(64, 8, 2048, 1024, 128, true);
        try {
            System.setProperty(GroupedGemmHeuristics.DEBUG_VARIANT, "d16");
            assertEquals(Variant.D16, GroupedGemmHeuristics.variant(s, H100));
            System.setProperty(GroupedGemmHeuristics.DEBUG_VARIANT, "W128N2");
            assertEquals(Variant.W128N2, GroupedGemmHeuristics.variant(s, H100));
            dev.gapfill.core.UnsupportedShapeException e = org.junit.jupiter.api.Assertions.assertThrows(
                    dev.gapfill.core.UnsupportedShapeException.class, () -> GroupedGemmHeuristics.variant(s, A100));
            assertEquals(GroupedGemmHeuristics.DEBUG_VARIANT, e.argument());
            System.setProperty(GroupedGemmHeuristics.DEBUG_VARIANT, "m99");
            org.junit.jupiter.api.Assertions.assertThrows(dev.gapfill.core.UnsupportedShapeException.class,
                    () -> GroupedGemmHeuristics.variant(s, H100));
        } finally {
            System.clearProperty(GroupedGemmHeuristics.DEBUG_VARIANT);
        }
        assertEquals(Variant.W64, GroupedGemmHeuristics.variant(s, H100));
        assertEquals(Variant.M64, GroupedGemmHeuristics.variant(s, A100));
    }

    @Test void largePerExpertGemmsGoToCublasOffHopper() {
        assertEquals("cublas_grouped", auto(moe(64, 8, 2048, 1024, 2048, true), A100));   // grouped 688, m64 836, loop 840
        assertEquals("cublas_grouped", auto(moe(160, 6, 5120, 1536, 2048, false), A100)); // grouped 1510, m64 1812
        assertEquals("cublas_loop", auto(moe(64, 8, 2048, 1024, 8192, true), A100));      // loop 1819, grouped 2429
        assertEquals("cublas_loop", auto(moe(160, 6, 5120, 1536, 8192, true), A100));     // loop 5570, grouped 6809
        assertEquals("cublas_loop", auto(moe(160, 6, 5120, 1536, 8192, false), A100));    // down, 4.8 GFLOP per group: loop 3405, grouped 4098
        // K*N = 2M is below VENDOR_MIN_KN, but 1024 rows and 4.3 GFLOP per group are loop-sized: loop 1385 vs m64 1484 (F16, c7982e3)
        Decision loopSized = GroupedGemmHeuristics.decide(moe(64, 8, 2048, 1024, 8192, false), A100, Backend.AUTO);
        assertEquals("cublas_loop", loopSized.variant());
        assertTrue(loopSized.reason().contains("4.3 GFLOP per group >= 4"), loopSized.reason());
        // 512 rows per group but 3.2 GFLOP per group: grouped 1954 vs loop 2269 (BF16, Java sweep at c2335e1)
        Decision small = GroupedGemmHeuristics.decide(moe(128, 8, 2048, 768, 8192, true), A100, Backend.AUTO);
        assertEquals("cublas_grouped", small.variant());
        assertTrue(small.reason().contains("GFLOP per group"), small.reason());
        assertEquals("cublas_loop", auto(moe(8, 2, 4096, 14336, 512, true), A100));       // loop 1000, m64 1483
        assertEquals("cublas_loop", auto(moe(8, 2, 4096, 14336, 512, false), A100));      // loop 451, m64 890
        Decision d = GroupedGemmHeuristics.decide(moe(64, 8, 2048, 1024, 2048, true), A100, Backend.AUTO);
        assertEquals(Backend.VENDOR, d.backend());
        assertTrue(d.reason().contains("rounded"), d.reason());
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
                    if (v.hopper && info.cc() != 90) {
                        continue;  // sm_90a SASS only; never chosen elsewhere
                    }
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
        // d16 at G=64: 8 stages x (16x72 + 64x72) x 2 B + 4 x (3·64 + 1) = 92932 B -> 2 CTAs on an H100 SM, 1 on an A100
        assertEquals(92932, Variant.D16.smemBytes(WeightLayout.KN, 64));
        assertEquals(2, GroupedGemmHeuristics.ctasPerSm(Variant.D16, 92932, H100));
        assertEquals(1, GroupedGemmHeuristics.ctasPerSm(Variant.D16, 92932, A100));
        // w64 at G=64: 1024 + 4 stages x (64 + 128) x 128 B + 4 x (65 + 64) = 99844 B -> 2 CTAs; w128n2: 1 CTA of 256 threads
        assertEquals(99844, Variant.W64.smemBytes(WeightLayout.KN, 64));
        assertEquals(2, GroupedGemmHeuristics.ctasPerSm(Variant.W64, 99844, H100));
        assertEquals(1, GroupedGemmHeuristics.ctasPerSm(Variant.W128N2, Variant.W128N2.smemBytes(WeightLayout.NK, 64), H100));
        assertEquals(256, Variant.W128N2.threads);
        // w64s6 at G=64: 1024 + 6 stages x 192 x 128 B + 4 x (65 + 64) = 148996 B -> 1 CTA, the whole ring in flight
        assertEquals(148996, Variant.W64S6.smemBytes(WeightLayout.KN, 64));
        assertEquals(1, GroupedGemmHeuristics.ctasPerSm(Variant.W64S6, 148996, H100));
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
