package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.UnsupportedShapeException;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Dispatch rules and launch plans of bmm, on the synthetic H100 and A100 descriptions (CPU only). */
class BmmHeuristicsTest {
    private static final DeviceInfo H100 = DeviceInfo.h100ForTests();
    private static final DeviceInfo A100 = DeviceInfo.a100ForTests();

    private static Backend auto(DType dt, long batch, long m, long n, long k) {
        return BmmHeuristics.decide(BmmShape.of(dt, batch, m, n, k), H100).backend();
    }

    @Test void measuredWinsGoCustom() {
        assertEquals(Backend.CUSTOM, auto(DType.F16, 8192, 8, 8, 8));
        assertEquals(Backend.CUSTOM, auto(DType.BF16, 2048, 16, 16, 16));
        assertEquals(Backend.CUSTOM, auto(DType.F16, 8192, 32, 32, 32));
        assertEquals(Backend.CUSTOM, auto(DType.F16, 2048, 17, 33, 9));
        assertEquals(Backend.CUSTOM, auto(DType.BF16, 512, 48, 48, 48));
        assertEquals(Backend.CUSTOM, auto(DType.F32, 8192, 48, 48, 48));
        assertEquals(Backend.CUSTOM, auto(DType.F32, 2048, 17, 33, 9));
    }

    @Test void measuredLossesGoVendor() {
        assertEquals(Backend.VENDOR, auto(DType.F16, 2048, 48, 48, 48));
        assertEquals(Backend.VENDOR, auto(DType.F16, 2048, 64, 64, 64));
        assertEquals(Backend.VENDOR, auto(DType.F16, 512, 64, 64, 64));   // 4de5ecd: vendor 8.70, custom 9.50
        assertEquals(Backend.VENDOR, auto(DType.BF16, 512, 64, 64, 64));
        assertEquals(Backend.VENDOR, auto(DType.BF16, 8192, 128, 128, 128));
        assertEquals(Backend.VENDOR, auto(DType.F16, 2048, 1, 128, 128));   // bmm_gemv above 64: 27.26 / 27.49 (harness)
        assertEquals(Backend.VENDOR, auto(DType.F16, 2048, 128, 1, 128));   // 27.23 / 32.61
        assertEquals(Backend.VENDOR, auto(DType.F32, 2048, 64, 1, 64));      // F32 gemv: 19.46 / 21.34
        assertEquals(Backend.VENDOR, auto(DType.F16, 2048, 32, 128, 64));
        assertEquals(Backend.VENDOR, auto(DType.F32, 2048, 64, 64, 64));
        assertEquals(Backend.VENDOR, auto(DType.F32, 512, 128, 128, 128));
        // rule 4c: F32 at batch >= 8192 with 64 < m, n, k <= 96 (8192 96^3: vendor 575.6, custom 542.7 us)
        assertEquals(Backend.CUSTOM, auto(DType.F32, 8192, 96, 96, 96));
        assertEquals(Backend.CUSTOM, auto(DType.F32, 16384, 80, 72, 96));
        assertEquals(Backend.VENDOR, auto(DType.F32, 2048, 96, 96, 96));
        assertEquals(Backend.VENDOR, auto(DType.F32, 8192, 64, 64, 64));
        assertEquals(Backend.VENDOR, auto(DType.F32, 8192, 128, 128, 128));
        assertEquals(Backend.VENDOR, auto(DType.F32, 8192, 64, 96, 96));
        // rule 4d: F32 where cuBLAS pads m and n to 32 enough (BmmF32Probe at ba6fb7a, vendor / custom us)
        assertEquals(Backend.CUSTOM, auto(DType.F32, 2048, 76, 76, 76));   // 122.0 / 90.4
        assertEquals(Backend.CUSTOM, auto(DType.F32, 2048, 36, 44, 52));   // 36.6 / 27.7
        assertEquals(Backend.CUSTOM, auto(DType.F32, 1024, 68, 68, 68));   // 59.2 / 40.3
        assertEquals(Backend.CUSTOM, auto(DType.F32, 2048, 84, 84, 84));   // 137.0 / 109.1: padding 1.31 at sqrt(mn) = 84
        assertEquals(Backend.CUSTOM, auto(DType.F32, 2048, 88, 88, 88));   // 133.9 / 121.1
        assertEquals(Backend.CUSTOM, auto(DType.F32, 2048, 72, 40, 64));   // 64.0 / 44.0
        assertEquals(Backend.VENDOR, auto(DType.F32, 2048, 56, 56, 56));   // 41.1 / 43.3: padding 1.31 at 56 is not enough
        assertEquals(Backend.VENDOR, auto(DType.F32, 2048, 60, 60, 60));   // 47.0 / 51.1
        assertEquals(Backend.VENDOR, auto(DType.F32, 2048, 92, 92, 92));   // 153.9 / 155.4
        assertEquals(Backend.VENDOR, auto(DType.F32, 512, 76, 76, 76));    // below F32_PAD_MIN_BATCH: not probed
        assertEquals(Backend.VENDOR, auto(DType.F32, 1023, 76, 76, 76));
        assertEquals(Backend.CUSTOM, auto(DType.F32, 1024, 76, 76, 76));   // 64.6 / 48.9
        assertEquals(Backend.CUSTOM, auto(DType.F32, 1024, 44, 44, 96));   // the probe's one miss: 29.7 / 33.5
        assertEquals(Backend.VENDOR, auto(DType.F32, 2048, 32, 40, 64));   // m = 32: padding 1.6 but outside the rule
        assertEquals(Backend.VENDOR, auto(DType.F32, 2048, 76, 76, 32));   // k = 32: not probed
        assertEquals(Backend.CUSTOM, auto(DType.F32, 2048, 76, 76, 33));
        assertEquals(Backend.VENDOR, auto(DType.F32, 2048, 64, 1, 64));    // n = 1: 19.5 / 31.6 (sweep)
        assertEquals(Backend.VENDOR, auto(DType.F32, 2048, 100, 100, 100));
        assertEquals(Backend.VENDOR, BmmHeuristics.decide(BmmShape.of(DType.F32, 2048, 76, 76, 76).withTransposes(true, false), H100).backend());
        BmmShape tt = BmmShape.of(DType.F32, 2048, 32, 32, 32).withTransposes(true, true);
        assertEquals(Backend.VENDOR, BmmHeuristics.decide(tt, H100).backend());
        BmmShape shared = BmmShape.of(DType.F16, 2048, 64, 64, 64).withSharedB(true);
        Decision d = BmmHeuristics.decide(shared, H100);
        assertEquals(Backend.VENDOR, d.backend());
        assertEquals("cublas_gemm_folded", d.variant());
    }

    private static String variant(BmmShape s) {
        return BmmHeuristics.decide(s, H100).variant();
    }

    /** bmm_gemv: which shapes, layouts and alignments it takes, its plans, and AUTO's rule for it (harness results-h100-gemv.txt). */
    @Test void gemvShapesPlansAndAutoRule() {
        BmmShape rowTimesMatrix = BmmShape.of(DType.F16, 2048, 1, 64, 64);
        BmmShape matrixTimesColumn = BmmShape.of(DType.F16, 2048, 64, 1, 64);
        assertEquals(new BmmHeuristics.GemvPlan("axpy_warp", false, 64, 3, 64L * 64, 64, 256, 256), BmmHeuristics.gemvPlan(rowTimesMatrix));
        assertEquals(new BmmHeuristics.GemvPlan("dot_lane", true, 64, 0, 64L * 64, 64, 256, 512), BmmHeuristics.gemvPlan(matrixTimesColumn));
        assertEquals(new BmmHeuristics.GemvPlan("axpy_lane", false, 64, 0, 64L * 64, 64, 256, 128),
                BmmHeuristics.gemvPlan(BmmShape.of(DType.F32, 2048, 1, 64, 64)));                      // F32: in-order lanes only
        assertEquals("dot_lane", BmmHeuristics.gemvPlan(rowTimesMatrix.withTransposes(false, true)).kind());   // B stored [n, k]
        assertEquals("axpy_warp", BmmHeuristics.gemvPlan(matrixTimesColumn.withTransposes(true, false)).kind()); // A stored [k, m]
        assertEquals("axpy_lane", BmmHeuristics.gemvPlan(BmmShape.of(DType.F16, 9, 1, 48, 64)).kind());   // 6 chunks: not a power of two
        BmmHeuristics.GemvPlan dotProduct = BmmHeuristics.gemvPlan(BmmShape.of(DType.F16, 9, 1, 1, 64).withTransposes(true, false));
        assertEquals(new BmmHeuristics.GemvPlan("dot_lane", true, 1, 0, 64, 64, 256, 1), dotProduct);   // m = n = 1: a dot product
        // a shared B is a shared vector (n = 1) or a shared matrix (m = 1)
        assertEquals(0, BmmHeuristics.gemvPlan(matrixTimesColumn.withSharedB(true)).vectorStride());
        assertEquals(0, BmmHeuristics.gemvPlan(rowTimesMatrix.withSharedB(true)).matrixStride());

        assertTrue(BmmHeuristics.useGemv(rowTimesMatrix, H100, 16));
        assertFalse(BmmHeuristics.useGemv(rowTimesMatrix, H100, 8));                                       // 16-byte loads and stores
        assertFalse(BmmHeuristics.useGemv(BmmShape.of(DType.F16, 2048, 1, 16, 16), H100, 16));             // bmm_frag's range
        assertTrue(BmmHeuristics.useGemv(BmmShape.of(DType.F16, 2048, 1, 16, 24), H100, 16));
        assertFalse(BmmHeuristics.useGemv(BmmShape.of(DType.F16, 2048, 1, 60, 64), H100, 16));             // 120-byte rows of B
        assertTrue(BmmHeuristics.useGemv(BmmShape.of(DType.F16, 2048, 1, 60, 64).withTransposes(false, true), H100, 16)); // rows of k
        assertFalse(BmmHeuristics.useGemv(BmmShape.of(DType.F16, 2048, 2, 64, 64), H100, 16));
        assertFalse(BmmHeuristics.useGemv(BmmShape.of(DType.F16, 2048, 1, 64, 136), H100, 16));            // above 128
        assertFalse(BmmHeuristics.useGemv(BmmShape.of(DType.F16, Integer.MAX_VALUE, 1, 1, 24), H100, 16));  // the batch margin

        assertEquals("gemv_axpy_warp_t256", forced(rowTimesMatrix));
        assertEquals("gemv_dot_lane_t256", variant(matrixTimesColumn));
        assertEquals("gemv_dot_lane_t256", variant(BmmShape.of(DType.BF16, 512, 64, 1, 64)));
        assertEquals(Backend.VENDOR, auto(DType.F16, 2048, 1, 64, 64));                                  // the axpy form: cuBLAS
        assertEquals(Backend.VENDOR, auto(DType.BF16, 8192, 1, 64, 64));
        assertEquals("gemv_axpy_warp_t256", variant(BmmShape.of(DType.BF16, 8192, 1, 32, 32)));  // rule 3's custom: gemv, not bmm_frag32
        assertEquals(Backend.VENDOR, BmmHeuristics.decide(matrixTimesColumn, H100, 8).backend());      // not on 16 bytes: the vendor
        assertEquals(Backend.VENDOR, auto(DType.F16, 2048, 64, 1, 64, true, false));                      // transposes: not measured
        assertEquals("gemv_dot_lane_t256", Bmm.decide(matrixTimesColumn.withSharedB(true), H100, Backend.CUSTOM, 16).variant());
        assertEquals(Backend.VENDOR, BmmHeuristics.decide(matrixTimesColumn.withSharedB(true), H100).backend());  // folded GEMM
    }

    private static Backend auto(DType dt, long batch, long m, long n, long k, boolean ta, boolean tb) {
        return BmmHeuristics.decide(BmmShape.of(dt, batch, m, n, k).withTransposes(ta, tb), H100).backend();
    }

    @Test void batchesNearTwoToThe31GoVendor() {
        BmmShape edge = BmmShape.of(DType.F32, Integer.MAX_VALUE - BmmHeuristics.CUSTOM_BATCH_MARGIN, 1, 1, 1);
        assertEquals(null, BmmHeuristics.customUnsupportedReason(edge, H100));
        BmmShape over = BmmShape.of(DType.F32, Integer.MAX_VALUE - BmmHeuristics.CUSTOM_BATCH_MARGIN + 1, 1, 1, 1);
        assertTrue(BmmHeuristics.customUnsupportedReason(over, H100).contains("batch"), BmmHeuristics.customUnsupportedReason(over, H100));
        assertEquals(Backend.VENDOR, BmmHeuristics.decide(over, H100).backend());
    }

    /** The rows of run 4de5ecd where bmm_team beat bmm_small, in the shipped plan's configuration. */
    @Test void teamWhereMeasuredFaster() {
        assertEquals("team_ffma_w1_g1_s2_dc", variant(BmmShape.of(DType.F32, 2048, 32, 32, 32)));
        assertEquals("team_ffma_w3_g1_s2_dc", variant(BmmShape.of(DType.F32, 8192, 48, 48, 48)));
        // rule 4b's m = 1 shape: the team kernel's rule, run by bmm_gemv since it takes the tensors (17.66 against 17.89 µs)
        assertEquals("gemv_axpy_lane_t256", variant(BmmShape.of(DType.F32, 2048, 1, 64, 64)));
        assertEquals(Backend.CUSTOM, auto(DType.F32, 2048, 1, 64, 64));
    }

    /**
     * F16/BF16 above 16 and up to 32 with even rows and B per matrix: bmm_frag32, where bmm_team and bmm_small ran before
     * (H100 harness results-h100-frag32h.txt, f16 32³ frag32 / small / team µs: 512 5.31 / 5.60 / 6.46 at four warps per
     * matrix; 2048 8.16 / 9.02 / 9.09 and 8192 19.26 / 23.30 / 19.97 at two).
     */
    @Test void halfUpTo32RunsFrag32() {
        assertEquals("frag32_mma_w4_t128", variant(BmmShape.of(DType.F16, 512, 32, 32, 32)));
        assertEquals("frag32_mma_w2_t128", variant(BmmShape.of(DType.BF16, 2048, 32, 32, 32)));
        assertEquals("frag32_mma_w2_t128", variant(BmmShape.of(DType.F16, 8192, 32, 32, 32)));
        assertEquals("frag32_mma_w2_t128", variant(BmmShape.of(DType.F16, 2048, 32, 32, 32).withTransposes(true, true)));  // 7.97 / 9.06 / 9.02
        assertEquals("frag32_mma_w4_t128", variant(BmmShape.of(DType.F16, 8 * 132, 17, 32, 2)));
        assertEquals("frag32_mma_w2_t128", variant(BmmShape.of(DType.F16, 8 * 132 + 1, 17, 32, 2)));
        // any alignment: the unaligned decision is the same kernel
        assertEquals("frag32_mma_w2_t128", BmmHeuristics.decide(BmmShape.of(DType.F16, 2048, 24, 16, 32), H100, false).variant());
        // not bmm_frag32: F32, a shared B (vendor: 2048 32³ cuBLAS 8.58, frag32 8.99), odd stored rows, past 32, up to 16
        assertFalse(BmmHeuristics.useFrag32(BmmShape.of(DType.F32, 2048, 32, 32, 32)));
        assertFalse(BmmHeuristics.useFrag32(BmmShape.of(DType.F16, 2048, 32, 32, 32).withSharedB(true)));
        assertEquals(Backend.VENDOR, BmmHeuristics.decide(BmmShape.of(DType.F16, 2048, 32, 32, 32).withSharedB(true), H100).backend());
        assertFalse(BmmHeuristics.useFrag32(BmmShape.of(DType.F16, 2048, 32, 32, 31)));                        // A rows k = 31
        assertTrue(BmmHeuristics.useFrag32(BmmShape.of(DType.F16, 2048, 32, 32, 31).withTransposes(true, false)));  // At rows are m
        assertFalse(BmmHeuristics.useFrag32(BmmShape.of(DType.F16, 2048, 32, 31, 32)));                        // B and C rows n = 31
        assertFalse(BmmHeuristics.useFrag32(BmmShape.of(DType.F16, 2048, 32, 32, 33)));
        assertFalse(BmmHeuristics.useFrag32(BmmShape.of(DType.F16, 2048, 16, 16, 16)));                        // bmm_frag's
        assertTrue(variant(BmmShape.of(DType.F16, 2048, 17, 33, 9)).startsWith("small_"));
    }

    @Test void frag32Plan() {
        assertEquals(new BmmHeuristics.Frag32Plan(4, 128, 512), BmmHeuristics.frag32Plan(BmmShape.of(DType.F16, 512, 32, 32, 32), H100));
        assertEquals(new BmmHeuristics.Frag32Plan(4, 128, 1056), BmmHeuristics.frag32Plan(BmmShape.of(DType.F16, 1056, 32, 32, 32), H100));
        assertEquals(new BmmHeuristics.Frag32Plan(2, 128, 529), BmmHeuristics.frag32Plan(BmmShape.of(DType.F16, 1057, 32, 32, 32), H100));
        assertEquals(new BmmHeuristics.Frag32Plan(2, 128, 1024), BmmHeuristics.frag32Plan(BmmShape.of(DType.BF16, 2048, 32, 32, 32), H100));
        assertEquals(new BmmHeuristics.Frag32Plan(4, 128, 2), BmmHeuristics.frag32Plan(BmmShape.of(DType.F16, 2, 20, 20, 20), H100));
    }

    @Test void smallWhereTeamWasNotFaster() {
        assertTrue(variant(BmmShape.of(DType.F32, 512, 32, 32, 32)).startsWith("small_"));    // team 7.52, small 7.07
        assertTrue(variant(BmmShape.of(DType.F32, 512, 17, 16, 16)).startsWith("small_"));    // F32 past bmm_frag's 16
        assertTrue(variant(BmmShape.of(DType.F16, 2048, 17, 33, 9)).startsWith("small_"));    // rows not 16-byte multiples, n > 16
        assertFalse(BmmHeuristics.useTeam(BmmShape.of(DType.F16, 8192, 32, 32, 32).withSharedB(true), H100));
        assertFalse(BmmHeuristics.useTeam(BmmShape.of(DType.F16, 8192, 32, 36, 32), H100));  // n % 8 != 0
        assertFalse(BmmHeuristics.useTeam(BmmShape.of(DType.F16, 8192, 32, 32, 32), new DeviceInfo(0, "old", 7, 5, 40, 4L << 20,
                64L << 10, 64L << 10, 16L << 30, 13000, 13000, 130100, -1)));
    }

    @Test void tiniestHalfMatricesRunTheFragmentKernel() {
        // every layout, shared B (when forced: AUTO folds it for the vendor), odd row counts, any alignment
        assertEquals("frag_mma_w4_t128", variant(BmmShape.of(DType.F16, 8192, 8, 8, 8)));       // 5.41 µs, small 9.34 at dcc8ffc
        assertEquals("frag_mma_w4_t128", variant(BmmShape.of(DType.BF16, 8192, 16, 16, 16)));   // 8.80, small 10.05 at dcc8ffc
        assertEquals("frag_mma_w1_t128", variant(BmmShape.of(DType.F16, 2048, 16, 16, 16).withTransposes(true, false)));
        assertEquals("frag_mma_w1_t128", variant(BmmShape.of(DType.F16, 512, 9, 16, 6)));    // odd m: rows still even
        assertEquals("frag_mma_w4_t128", variant(BmmShape.of(DType.F16, 65536, 8, 8, 8)));
        // a shared B stays custom where bmm_frag takes it (2048 16³ shared, harness: vendor 7.26, frag 4.80 µs)
        BmmShape shared = BmmShape.of(DType.F16, 2048, 16, 16, 16).withSharedB(true);
        assertEquals("frag_mma_w1_t128", variant(shared));
        assertTrue(Bmm.decide(shared, H100, Backend.CUSTOM).variant().startsWith("frag_"));
        assertEquals(Backend.VENDOR, BmmHeuristics.decide(BmmShape.of(DType.F16, 2048, 17, 16, 16).withSharedB(true), H100).backend());
        assertEquals(Backend.VENDOR, BmmHeuristics.decide(BmmShape.of(DType.F16, 2048, 8, 8, 7).withSharedB(true), H100).backend());
        assertTrue(Bmm.decide(BmmShape.of(DType.F16, 2048, 16, 16, 16), H100, Backend.CUSTOM, false).variant().startsWith("frag_"));
        assertFalse(BmmHeuristics.useFrag(BmmShape.of(DType.F16, 2048, 17, 16, 16)));
        assertFalse(BmmHeuristics.useFrag(BmmShape.of(DType.F16, 2048, 16, 16, 17)));
        // odd stored row lengths stay on bmm_small (9×15×7 batch 8192: frag 10.05, small 9.73 at dcc8ffc)
        assertTrue(variant(BmmShape.of(DType.F16, 8192, 9, 15, 7)).startsWith("small_"));
        assertFalse(BmmHeuristics.useFrag(BmmShape.of(DType.F16, 2048, 8, 8, 7)));                         // A rows k = 7
        assertTrue(BmmHeuristics.useFrag(BmmShape.of(DType.F16, 2048, 8, 8, 7).withTransposes(true, false)));  // At rows are m
        assertFalse(BmmHeuristics.useFrag(BmmShape.of(DType.F16, 2048, 7, 8, 8).withTransposes(true, false)));
        assertFalse(BmmHeuristics.useFrag(BmmShape.of(DType.F16, 2048, 8, 8, 7).withTransposes(true, true)));  // Bt rows are k
        assertFalse(BmmHeuristics.useFrag(BmmShape.of(DType.F16, 2048, 8, 7, 8).withTransposes(false, true)));  // C rows are n
    }

    @Test void tiniestF32MatricesRunTheRegisterKernel() {
        // harness results-h100-frag32.txt (µs): 8192 8³ vendor 35.81, small 7.36, frag 5.76 two per warp, 5.95 one
        assertEquals("frag_ffma_s8_w2_t128", variant(BmmShape.of(DType.F32, 8192, 8, 8, 8)));
        assertEquals("frag_ffma_s8_w1_t128", variant(BmmShape.of(DType.F32, 2048, 8, 8, 8)));        // 10.24 / 5.82 / 4.38
        assertEquals("frag_ffma_s16_w1_t128", variant(BmmShape.of(DType.F32, 8192, 16, 16, 16)));    // 25.06 / 14.18 / 12.74
        assertEquals("frag_ffma_s16_w1_t128", variant(BmmShape.of(DType.F32, 512, 16, 16, 16)));     // 6.62 / 5.38 / 5.12
        assertEquals("frag_ffma_s16_w1_t128", variant(BmmShape.of(DType.F32, 8192, 9, 15, 7)));      // odd: 20.38 / 15.14 / 12.64
        assertEquals("frag_ffma_s16_w1_t128", variant(BmmShape.of(DType.F32, 2048, 8, 16, 8)));      // one side past 8
        assertEquals("frag_ffma_s16_w1_t128", variant(BmmShape.of(DType.F32, 2048, 16, 16, 16).withSharedB(true)));  // 8.16 / 5.54
        assertEquals("frag_ffma_s16_w1_t128", BmmHeuristics.decide(BmmShape.of(DType.F32, 2048, 12, 12, 12), H100, false).variant());
        assertTrue(BmmHeuristics.useFrag(BmmShape.of(DType.F32, 5, 1, 1, 1)));
        assertTrue(BmmHeuristics.useFrag(BmmShape.of(DType.F32, 2048, 1, 16, 16)));  // m = 1: frag, not rule 4b's team kernel
        // as stored only: a transposed F32 operand goes to the vendor (AUTO) or bmm_small (forced)
        for (boolean[] t : new boolean[][] {{true, false}, {false, true}, {true, true}}) {
            BmmShape s = BmmShape.of(DType.F32, 8192, 8, 8, 8).withTransposes(t[0], t[1]);
            assertFalse(BmmHeuristics.useFrag(s));
            assertEquals(Backend.VENDOR, BmmHeuristics.decide(s, H100).backend());
            assertTrue(Bmm.decide(s, H100, Backend.CUSTOM).variant().startsWith("small_"));
        }
        assertFalse(BmmHeuristics.useFrag(BmmShape.of(DType.F32, 2048, 16, 17, 16)));
    }

    @Test void f32FragPlan() {
        assertEquals(new BmmHeuristics.FragPlan(1, 128, 512), BmmHeuristics.fragPlan(BmmShape.of(DType.F32, 2048, 8, 8, 8), H100));
        // 8192 on 132 SMs: 63 warps per SM, two matrices each at 8³, one at 16³
        assertEquals(new BmmHeuristics.FragPlan(2, 128, 1024), BmmHeuristics.fragPlan(BmmShape.of(DType.F32, 8192, 8, 8, 8), H100));
        assertEquals(new BmmHeuristics.FragPlan(1, 128, 2048), BmmHeuristics.fragPlan(BmmShape.of(DType.F32, 8192, 16, 16, 16), H100));
        assertEquals(new BmmHeuristics.FragPlan(1, 128, 1023), BmmHeuristics.fragPlan(BmmShape.of(DType.F32, 31 * 132, 8, 8, 8), H100));
        assertEquals(new BmmHeuristics.FragPlan(2, 128, 512), BmmHeuristics.fragPlan(BmmShape.of(DType.F32, 31 * 132 + 1, 8, 8, 8), H100));
    }

    /** Worked example of the fragPlan javadoc: 132 SMs, four warps per block. */
    @Test void fragPlanWorkedExample() {
        BmmHeuristics.FragPlan p = BmmHeuristics.fragPlan(BmmShape.of(DType.F16, 2048, 8, 8, 8), H100);
        assertEquals(new BmmHeuristics.FragPlan(1, 128, 512), p);
        p = BmmHeuristics.fragPlan(BmmShape.of(DType.F16, 8192, 8, 8, 8), H100);
        assertEquals(new BmmHeuristics.FragPlan(4, 128, 512), p);
        p = BmmHeuristics.fragPlan(BmmShape.of(DType.F16, 31 * 132, 8, 8, 8), H100);   // 31 warps per SM: still one each
        assertEquals(new BmmHeuristics.FragPlan(1, 128, 1023), p);
        p = BmmHeuristics.fragPlan(BmmShape.of(DType.F16, 31 * 132 + 1, 8, 8, 8), H100);
        assertEquals(new BmmHeuristics.FragPlan(4, 128, 256), p);
        p = BmmHeuristics.fragPlan(BmmShape.of(DType.F16, 7, 8, 8, 8), H100);   // a partial block still covers the batch
        assertEquals(new BmmHeuristics.FragPlan(1, 128, 2), p);
    }

    @Test void unalignedTensorsNeverGetTheTeamKernel() {
        BmmShape s = BmmShape.of(DType.F32, 8192, 32, 32, 32);
        assertTrue(BmmHeuristics.decide(s, H100, false).variant().startsWith("small_"));
        assertTrue(Bmm.decide(s, H100, Backend.CUSTOM, false).variant().startsWith("small_"));
        assertTrue(Bmm.decide(s, H100, Backend.CUSTOM, true).variant().startsWith("team_"));
        // F16/BF16 32³ runs bmm_frag32 either way (any alignment)
        BmmShape h = BmmShape.of(DType.F16, 8192, 32, 32, 32);
        assertEquals(Bmm.decide(h, H100, Backend.CUSTOM, true).variant(), Bmm.decide(h, H100, Backend.CUSTOM, false).variant());
        // rule 4b exists only for the team kernel: unaligned, the vendor runs
        assertEquals(Backend.VENDOR, BmmHeuristics.decide(BmmShape.of(DType.F32, 2048, 1, 64, 64), H100, false).backend());
    }

    /** Worked example of the teamPlan javadoc: F16 8192 at 32³ on an H100. */
    @Test void teamPlanExample() {
        BmmHeuristics.TeamPlan p = BmmHeuristics.teamPlan(BmmShape.of(DType.F16, 8192, 32, 32, 32), H100);
        assertEquals(1, p.mats());
        assertEquals(1, p.teamWarps());
        assertEquals(4, p.teamsPerBlock());
        assertEquals(2, p.stages());
        assertFalse(p.directC());
        assertEquals(128, p.threads());
        assertEquals(4 * (2 * 2 * 32 * 40 * 2 + 32 * 40 * 2), p.smemBytes());
        assertEquals(512, p.grid());
    }

    private static String forced(BmmShape s) {
        return Bmm.decide(s, H100, Backend.CUSTOM, true).variant();
    }

    /**
     * F16/BF16 above 32 with m·n·k above 32³: forced CUSTOM runs bmm_team in the configurations the H100 harness
     * measured fastest (w4 s2 at 48³ and 64³, w8 s2 from 5 warp tiles, 96³ and 128³ among them; widths from runs
     * 4de5ecd, ab53e1c and e4b8c63, stages from f673558), from batch 2048, and above 96 at any batch;
     * AUTO's choice on those shapes stays cuBLAS; unaligned, misaligned rows, a shared B or an A100 without the shared
     * memory for the 128³ plan run bmm_small.
     */
    @Test void halfMidSizesRunTheTeamKernelWhenForced() {
        assertEquals("team_mma_w4_g1_s2_sc", forced(BmmShape.of(DType.F16, 2048, 48, 48, 48)));
        // u = 4 with m, n, k <= 48 from 24 matrices per SM (3168 on 132 SMs): two warps, two warp tiles each
        assertEquals("team_mma_w2_g1_s2_sc", forced(BmmShape.of(DType.F16, 8192, 48, 48, 48)));
        assertEquals("team_mma_w2_g1_s2_sc", forced(BmmShape.of(DType.BF16, 4096, 48, 48, 48)));
        assertEquals("team_mma_w2_g1_s2_sc", forced(BmmShape.of(DType.F16, 3168, 40, 40, 40)));
        assertEquals("team_mma_w4_g1_s2_sc", forced(BmmShape.of(DType.F16, 3167, 40, 40, 40)));
        assertEquals("team_mma_w4_g1_s2_sc", forced(BmmShape.of(DType.F16, 8192, 56, 56, 56)));           // k, m, n > 48
        assertEquals("team_mma_w4_g1_s2_sc", forced(BmmShape.of(DType.F16, 8192, 48, 48, 56)));
        assertEquals("team_mma_w4_g1_s2_sc", forced(BmmShape.of(DType.BF16, 4096, 64, 64, 64)));
        assertEquals("team_mma_w4_g1_s2_sc", forced(BmmShape.of(DType.BF16, 8192, 64, 64, 64)));
        assertEquals("wg_mma_t256", forced(BmmShape.of(DType.F16, 2048, 96, 96, 96)));                   // u = 9: bmm_wg on sm_90
        assertEquals("team_mma_w8_g1_s2_sc", Bmm.decide(BmmShape.of(DType.F16, 2048, 96, 96, 96), A100, Backend.CUSTOM, true).variant());
        assertEquals("team_mma_w8_g1_s2_sc", forced(BmmShape.of(DType.F16, 2048, 128, 64, 64)));         // u = 8
        assertEquals("team_mma_w8_g1_s2_sc", forced(BmmShape.of(DType.BF16, 2048, 64, 96, 64)));         // u = 6
        assertEquals("team_mma_w4_g1_s2_sc", forced(BmmShape.of(DType.F16, 2048, 64, 64, 40)));          // u = 4
        assertEquals("wg_mma_t256", forced(BmmShape.of(DType.BF16, 512, 96, 112, 80)));                  // u = 12
        assertEquals("wg_mma_t256", forced(BmmShape.of(DType.BF16, 2048, 128, 128, 128).withTransposes(true, true)));
        assertEquals("wg_mma_t256", forced(BmmShape.of(DType.F16, 512, 128, 128, 128)));
        assertEquals("team_mma_w8_g1_s2_sc", Bmm.decide(BmmShape.of(DType.BF16, 512, 96, 112, 80), A100, Backend.CUSTOM, true).variant());
        assertEquals("team_mma_w4_g1_s2_sc", forced(BmmShape.of(DType.F16, 2048, 32, 128, 64)));
        assertTrue(forced(BmmShape.of(DType.F16, 512, 64, 64, 64)).startsWith("small_"));         // 48³..96³ at 512: small
        assertEquals("gemv_axpy_warp_t256", forced(BmmShape.of(DType.F16, 2048, 1, 64, 64)));       // m = 1: bmm_gemv
        assertTrue(forced(BmmShape.of(DType.F16, 2048, 100, 100, 100)).startsWith("wg_"));        // rows 8-byte, not 16-byte multiples, u = 16
        assertTrue(forced(BmmShape.of(DType.F16, 2048, 98, 98, 98)).startsWith("small_"));        // rows 4-byte multiples
        assertTrue(forced(BmmShape.of(DType.F16, 2048, 64, 64, 64).withSharedB(true)).startsWith("small_"));
        assertTrue(Bmm.decide(BmmShape.of(DType.F16, 2048, 64, 64, 64), H100, Backend.CUSTOM, false).variant().startsWith("small_"));
        assertTrue(Bmm.decide(BmmShape.of(DType.F16, 2048, 128, 128, 128), A100, Backend.CUSTOM, true).variant().startsWith("small_"));
        assertEquals("team_mma_w4_g1_s2_sc", Bmm.decide(BmmShape.of(DType.F16, 2048, 64, 64, 64), A100, Backend.CUSTOM, true).variant());
        for (long batch : new long[] {512, 2048, 8192}) {
            for (int n : new int[] {48, 64, 96, 128}) {
                for (DType dt : new DType[] {DType.F16, DType.BF16}) {
                    Decision d = BmmHeuristics.decide(BmmShape.of(dt, batch, n, n, n), H100);
                    if (batch == 512 && n == 48) {  // rule 3 (bf16 512 48³: vendor 10.1, small 8.6 µs) keeps bmm_small
                        assertEquals("small_mma_g1_t256", d.variant(), d.toString());
                    } else {
                        assertEquals(Backend.VENDOR, d.backend(), batch + " " + n + " " + d);
                    }
                }
            }
        }
    }

    /**
     * F16/BF16 rows in 8-byte but not 16-byte multiples (stored column counts % 4 == 0, some % 8 != 0) run bmm_team8
     * when forced (bmm_small before), from batch 512 or above 96; AUTO takes it up to 9 warp tiles and leaves u = 16 to
     * cuBLAS. 16-byte rows on 8-byte-aligned pointers run bmm_team8 where bmm_team would run; no 8-byte alignment, bmm_small.
     * On an A100: on sm_90 bmm_wg takes the shapes with at least 9 warp tiles first (the next test).
     */
    @Test void eightByteRowsRunTheTeam8Kernel() {
        assertEquals("team8_mma_w8_g1_s2_sc", Bmm.decide(BmmShape.of(DType.F16, 2048, 100, 100, 100), A100, Backend.CUSTOM, 16).variant());
        assertEquals("team8_mma_w4_g1_s2_sc", Bmm.decide(BmmShape.of(DType.BF16, 2048, 60, 60, 60), A100, Backend.CUSTOM, 8).variant());
        assertEquals("team8_mma_w4_g1_s2_sc", Bmm.decide(BmmShape.of(DType.BF16, 2048, 60, 60, 60), H100, Backend.CUSTOM, 8).variant());
        assertEquals("team8_mma_w8_g1_s2_sc", Bmm.decide(BmmShape.of(DType.F16, 512, 76, 76, 76), A100, Backend.CUSTOM, 16).variant());
        assertEquals("team8_mma_w8_g1_s2_sc", Bmm.decide(BmmShape.of(DType.F16, 64, 100, 100, 100), A100, Backend.CUSTOM, 16).variant());
        assertTrue(Bmm.decide(BmmShape.of(DType.F16, 256, 60, 60, 60), H100, Backend.CUSTOM, 16).variant().startsWith("small_"));
        assertTrue(Bmm.decide(BmmShape.of(DType.F16, 2048, 60, 60, 60), H100, Backend.CUSTOM, 0).variant().startsWith("small_"));
        assertTrue(Bmm.decide(BmmShape.of(DType.F16, 2048, 62, 62, 62), H100, Backend.CUSTOM, 16).variant().startsWith("small_"));
        assertTrue(Bmm.decide(BmmShape.of(DType.F16, 2048, 60, 60, 60).withSharedB(true), H100, Backend.CUSTOM, 16).variant().startsWith("small_"));
        assertTrue(Bmm.decide(BmmShape.of(DType.F32, 2048, 60, 60, 60), H100, Backend.CUSTOM, 16).variant().startsWith("small_"));
        // 16-byte rows: bmm_team on 16-byte pointers, bmm_team8 on 8-byte ones
        assertEquals("team_mma_w4_g1_s2_sc", Bmm.decide(BmmShape.of(DType.F16, 2048, 64, 64, 64), H100, Backend.CUSTOM, 16).variant());
        assertEquals("team8_mma_w4_g1_s2_sc", Bmm.decide(BmmShape.of(DType.F16, 2048, 64, 64, 64), H100, Backend.CUSTOM, 8).variant());
        // AUTO
        for (DType dt : new DType[] {DType.F16, DType.BF16}) {
            for (long batch : new long[] {2048, 4096, 8192}) {
                for (int[] d : new int[][] {{60, 60, 60}, {76, 76, 76}, {92, 92, 92}, {36, 44, 52}, {124, 36, 60}, {44, 44, 44}}) {
                    BmmShape sh = BmmShape.of(dt, batch, d[0], d[1], d[2]);
                    Decision x = BmmHeuristics.decide(sh, A100, 16);
                    assertTrue(x.variant().startsWith("team8_"), sh + " " + x);
                    assertTrue(BmmHeuristics.decide(sh, A100, 8).variant().startsWith("team8_"), sh.toString());
                    assertTrue(BmmHeuristics.decide(sh, H100, 8).variant().startsWith("team8_"), sh.toString());
                    assertEquals(Backend.VENDOR, BmmHeuristics.decide(sh, A100, 0).backend(), sh.toString());
                    assertEquals(Backend.VENDOR, BmmHeuristics.decide(sh, H100, 0).backend(), sh.toString());
                }
                for (int[] d : new int[][] {{100, 100, 100}, {124, 124, 124}}) {  // u = 16
                    BmmShape sh = BmmShape.of(dt, batch, d[0], d[1], d[2]);
                    assertEquals(Backend.VENDOR, BmmHeuristics.decide(sh, A100, 16).backend(), sh.toString());
                    assertEquals(Backend.VENDOR, BmmHeuristics.decide(sh, H100, 8).backend(), sh.toString());
                }
            }
            assertEquals(Backend.VENDOR, BmmHeuristics.decide(BmmShape.of(dt, 512, 76, 76, 76), A100, 16).backend());
            assertEquals(Backend.VENDOR, BmmHeuristics.decide(BmmShape.of(dt, 1024, 60, 60, 60), H100, 16).backend());
            // at batch <= 1024 with max(m,n,k) <= 48 rule 3 runs the custom path, which is bmm_team8 from 512
            assertTrue(BmmHeuristics.decide(BmmShape.of(dt, 512, 44, 44, 44), H100, 16).variant().startsWith("team8_"));
            assertEquals(Backend.VENDOR, BmmHeuristics.decide(BmmShape.of(dt, 2048, 64, 64, 64), H100, 8).backend());
        }
    }

    /**
     * bmm_wg (wgmma, sm_90a) on compute capability 9.0 only: F16/BF16 with at least 9 warp tiles, every operand a 16-byte
     * multiple, tensors on 16 bytes. Forced CUSTOM takes it on 16-byte rows as well; AUTO (rule 3c) on 8-byte rows only,
     * from batch 512, where it led cuBLAS on every measured row (results-h100-wg.txt); with 16-byte rows cuBLAS stays.
     */
    @Test void wgKernelOnHopperFromNineWarpTiles() {
        for (DType dt : new DType[] {DType.F16, DType.BF16}) {
            for (long batch : new long[] {512, 2048, 8192}) {
                for (int[] d : new int[][] {{100, 100, 100}, {124, 124, 124}, {76, 76, 76}, {92, 92, 92}, {68, 68, 68}, {100, 100, 36}}) {
                    BmmShape sh = BmmShape.of(dt, batch, d[0], d[1], d[2]);
                    Decision x = BmmHeuristics.decide(sh, H100, 16);
                    assertEquals("wg_mma_t256", x.variant(), sh + " " + x);
                    assertEquals(Backend.CUSTOM, x.backend());
                    assertTrue(x.reason().contains("bmm_wg"), x.reason());
                }
                for (int n : new int[] {96, 128}) {  // 16-byte rows: cuBLAS in AUTO, bmm_wg when forced
                    BmmShape sh = BmmShape.of(dt, batch, n, n, n);
                    assertEquals(Backend.VENDOR, BmmHeuristics.decide(sh, H100, 16).backend(), sh.toString());
                    assertEquals("wg_mma_t256", Bmm.decide(sh, H100, Backend.CUSTOM, 16).variant(), sh.toString());
                }
            }
            assertEquals(Backend.VENDOR, BmmHeuristics.decide(BmmShape.of(dt, 256, 100, 100, 100), H100, 16).backend());
            for (boolean ta : new boolean[] {false, true}) {
                for (boolean tb : new boolean[] {false, true}) {
                    assertEquals("wg_mma_t256", Bmm.decide(BmmShape.of(dt, 2048, 100, 100, 100).withTransposes(ta, tb), H100, Backend.CUSTOM, 16).variant());
                }
            }
        }
        // not taken: fewer than 9 warp tiles, an operand not a 16-byte multiple, 8-byte pointers, shared B, F32, other GPUs
        assertTrue(Bmm.decide(BmmShape.of(DType.F16, 2048, 64, 64, 64), H100, Backend.CUSTOM, 16).variant().startsWith("team_"));
        assertEquals("wg_mma_t256", Bmm.decide(BmmShape.of(DType.F16, 2048, 124, 36, 60), H100, Backend.CUSTOM, 16).variant());  // u = 8, 8-byte rows
        assertEquals("wg_mma_t256", BmmHeuristics.decide(BmmShape.of(DType.F16, 512, 124, 36, 60), H100, 16).variant());       // ... AUTO from 512
        assertTrue(Bmm.decide(BmmShape.of(DType.F16, 2048, 128, 64, 64), H100, Backend.CUSTOM, 16).variant().startsWith("team_"));  // u = 8, 16-byte rows
        assertEquals("wg_mma_t256", Bmm.decide(BmmShape.of(DType.F16, 2048, 60, 100, 40), H100, Backend.CUSTOM, 16).variant());  // u = 2·4 = 8
        assertEquals("wg_mma_t256", Bmm.decide(BmmShape.of(DType.F16, 2048, 60, 76, 36), H100, Backend.CUSTOM, 16).variant());  // u = 2·3 = 6
        for (DType dt : new DType[] {DType.F16, DType.BF16}) {  // u = 6, 8-byte rows: AUTO from 512 (rule 3c), bmm_team8 on other GPUs
            for (int[] d : new int[][] {{76, 60, 36}, {60, 76, 44}, {92, 52, 100}, {52, 92, 60}}) {
                for (long batch : new long[] {512, 2048, 8192}) {
                    BmmShape sh = BmmShape.of(dt, batch, d[0], d[1], d[2]);
                    assertEquals("wg_mma_t256", BmmHeuristics.decide(sh, H100, 16).variant(), sh.toString());
                    Decision eight = BmmHeuristics.decide(sh, H100, 8);  // 8-byte pointers: no bmm_wg
                    if (batch >= BmmHeuristics.TEAM8_AUTO_MIN_BATCH) {
                        assertTrue(eight.variant().startsWith("team8_"), sh + " " + eight);
                    } else {
                        assertEquals(Backend.VENDOR, eight.backend(), sh + " " + eight);
                    }
                }
                assertTrue(Bmm.decide(BmmShape.of(dt, 2048, d[0], d[1], d[2]), A100, Backend.CUSTOM, 16).variant().startsWith("team8_"));
            }
        }
        assertFalse(BmmHeuristics.useWg(BmmShape.of(DType.F16, 2048, 64, 96, 64), H100, 16));  // u = 6 with 16-byte rows: bmm_team
        assertTrue(Bmm.decide(BmmShape.of(DType.F16, 2048, 60, 60, 60), H100, Backend.CUSTOM, 16).variant().startsWith("team8_"));  // u = 4
        assertTrue(BmmHeuristics.useWg(BmmShape.of(DType.F16, 2048, 68, 100, 36), H100, 16));      // m·k 2448, k·n 3600, m·n 6800: % 8 == 0
        assertFalse(BmmHeuristics.useWg(BmmShape.of(DType.F16, 2048, 97, 100, 100), H100, 16));     // m·k = 9700: A not 16-byte chunks
        assertTrue(Bmm.decide(BmmShape.of(DType.F16, 2048, 97, 100, 100), H100, Backend.CUSTOM, 16).variant().startsWith("team8_"));
        assertFalse(BmmHeuristics.useWg(BmmShape.of(DType.F16, 2048, 100, 100, 100), H100, 8));
        assertFalse(BmmHeuristics.useWg(BmmShape.of(DType.F16, 2048, 100, 100, 100).withSharedB(true), H100, 16));
        assertFalse(BmmHeuristics.useWg(BmmShape.of(DType.F32, 2048, 100, 100, 100), H100, 16));
        assertFalse(BmmHeuristics.useWg(BmmShape.of(DType.F16, 2048, 100, 100, 100), A100, 16));
        assertFalse(BmmHeuristics.useWg(BmmShape.of(DType.F16, 2048, 98, 98, 98), H100, 16));       // rows 4-byte multiples
        assertFalse(BmmHeuristics.useWg(BmmShape.of(DType.F16, 2048, 100, 100, 132), H100, 16));    // k > 128
        assertFalse(BmmHeuristics.useWg(BmmShape.of(DType.F16, 2048, 100, 100, 100), new DeviceInfo(0, "GH-next", 10, 0, 148,
                50L << 20, 227L << 10, 228L << 10, 80L << 30, 13000, 13000, 130100, 91400), 16));  // sm_90a SASS only
    }

    /** Worked example of wgPlan's javadoc: 100³ F16 on an H100, two blocks per SM; 128³ leaves room for one. */
    @Test void wgPlanExample() {
        assertEquals(new BmmHeuristics.WgPlan(256, 264, 106_560), BmmHeuristics.wgPlan(BmmShape.of(DType.F16, 2048, 100, 100, 100), H100));
        assertEquals(new BmmHeuristics.WgPlan(256, 132, 132_096), BmmHeuristics.wgPlan(BmmShape.of(DType.BF16, 8192, 128, 128, 128), H100));
        assertEquals(new BmmHeuristics.WgPlan(256, 100, 106_560), BmmHeuristics.wgPlan(BmmShape.of(DType.F16, 100, 100, 100, 100), H100));
    }

    /** Worked example of the teamPlan javadoc for the mid sizes: F16 2048 at 128³ on an H100. */
    @Test void teamPlanExampleMidSize() {
        BmmHeuristics.TeamPlan p = BmmHeuristics.teamPlan(BmmShape.of(DType.F16, 2048, 128, 128, 128), H100);
        assertEquals(new BmmHeuristics.TeamPlan(1, 8, 1, 2, false, 256, 128, 2 * 2 * 128 * 136 * 2 + 128 * 136 * 2), p);
        assertEquals(174_080, p.smemBytes());
    }

    /**
     * Mid sizes with at most 4 warp tiles run 2 stages at every team width (run f673558: 2 ahead of 3 on all 18 rows
     * with u = 1 to 4); the width stays min(4, u).
     */
    @Test void teamPlanMidSizesUpToFourWarpTilesUseTwoStages() {
        int[][] shapes = {{32, 32, 128}, {48, 32, 128}, {32, 64, 96}, {16, 48, 96}, {48, 48, 48}, {64, 64, 64}, {40, 56, 72}};
        int[] warps = {1, 2, 2, 2, 4, 4, 4};
        for (int i = 0; i < shapes.length; i++) {
            int[] d = shapes[i];
            BmmHeuristics.TeamPlan p = BmmHeuristics.teamPlan(BmmShape.of(DType.BF16, 2048, d[0], d[1], d[2]), H100);
            assertEquals(warps[i], p.teamWarps(), java.util.Arrays.toString(d) + " " + p);
            assertEquals(2, p.stages(), java.util.Arrays.toString(d) + " " + p);
        }
        // F16 2048 at 64³: one matrix per group; A and B padded to 64 x 72 halves, two stages and one C slot each
        BmmHeuristics.TeamPlan p = BmmHeuristics.teamPlan(BmmShape.of(DType.F16, 2048, 64, 64, 64), H100);
        assertEquals(1, p.mats());
        assertEquals(2, p.teamsPerBlock());
        assertEquals(2 * (2 * (64 * 72 * 2 + 64 * 72 * 2) + 64 * 72 * 2), p.smemBytes());
    }

    @Property(tries = 300)
    void teamPlansAreLaunchable(@ForAll @IntRange(min = 1, max = 20000) int batch, @ForAll @IntRange(min = 1, max = 16) int m8,
                                @ForAll @IntRange(min = 1, max = 16) int n8, @ForAll @IntRange(min = 1, max = 16) int k8,
                                @ForAll @IntRange(min = 0, max = 2) int dt, @ForAll boolean ta, @ForAll boolean tb) {
        DType dtype = new DType[] {DType.F16, DType.BF16, DType.F32}[dt];
        BmmShape s = BmmShape.of(dtype, batch, 8L * m8, 8L * n8, 8L * k8).withTransposes(ta, tb);
        assertTrue(BmmHeuristics.teamTakes(s));
        for (DeviceInfo info : new DeviceInfo[] {H100, A100}) {
            BmmHeuristics.TeamPlan p = BmmHeuristics.teamPlan(s, info);
            assertTrue(p.mats() >= 1 && p.mats() <= Math.max(1, batch) && p.mats() <= 16, "mats " + p);
            assertTrue(p.teamWarps() >= 1 && p.teamWarps() <= 8 && p.teamsPerBlock() >= 1 && p.teamsPerBlock() <= 4, "teams " + p);
            assertEquals(p.teamsPerBlock() * p.teamWarps() * 32, p.threads());
            assertTrue(p.threads() <= 256, "threads " + p);
            assertTrue(p.stages() >= 2 && p.stages() <= 6, "stages " + p);
            long groups = (batch + p.mats() - 1) / p.mats();
            assertTrue(p.grid() >= 1 && (long) (p.grid() - 1) * p.teamsPerBlock() < groups, "no block without a group: " + p);
            if (BmmHeuristics.useTeam(s, info)) {
                assertTrue(p.smemBytes() <= info.smemPerBlockOptin(), "smem " + p);
            }
        }
    }

    @Test void halfTransposesStayCustomWhereMeasured() {
        BmmShape tt = BmmShape.of(DType.F16, 2048, 32, 32, 32).withTransposes(true, true);
        assertEquals(Backend.CUSTOM, BmmHeuristics.decide(tt, H100).backend());
    }

    @Test void aboveTheKernelLimitCustomIsRefusedAndAutoIsVendor() {
        BmmShape big = BmmShape.of(DType.F16, 512, 192, 192, 192);
        assertNotNull(BmmHeuristics.customUnsupportedReason(big, H100));
        assertEquals(Backend.VENDOR, BmmHeuristics.decide(big, H100).backend());
        UnsupportedShapeException e = assertThrows(UnsupportedShapeException.class, () -> Bmm.decide(big, H100, Backend.CUSTOM));
        assertEquals("backend", e.argument());
        assertEquals(Backend.VENDOR, Bmm.decide(big, H100, Backend.VENDOR).backend());
        assertEquals(Backend.CUSTOM, Bmm.decide(BmmShape.of(DType.F32, 4, 128, 128, 128), H100, Backend.CUSTOM).backend());
        assertEquals("options.backend", assertThrows(ArgumentException.class,
                () -> Bmm.decide(BmmShape.of(DType.F16, 4, 8, 8, 8), H100, Backend.REFERENCE)).argument());
    }

    @Test void vendorVariantNamesTheF32Precision() {
        BmmShape tf32 = new BmmShape(DType.F32, 8, 200, 200, 200, false, false, false, Bmm.Precision.TF32);
        assertEquals("cublas_strided_batched_tf32", BmmHeuristics.decide(tf32, H100).variant());
        assertEquals("cublas_strided_batched_fp32", BmmHeuristics.decide(BmmShape.of(DType.F32, 8, 200, 200, 200), H100).variant());
    }

    /** Worked example of the plan javadoc: F16 batch 2048 at 16³ on 132 SMs. */
    @Test void planExample() {
        BmmHeuristics.Plan p = BmmHeuristics.plan(BmmShape.of(DType.F16, 2048, 16, 16, 16), H100);
        assertEquals(7, p.mats());
        assertEquals(7 * 32, p.threads());
        assertEquals(293, p.grid());
        // per matrix: A and B each 16 rows x (16 + 8) halves
        assertEquals(7 * 2 * 16 * 24 * 2, p.smemBytes());
    }

    @Test void f32At128FitsOneBlockOnBothGpus() {
        BmmShape s = BmmShape.of(DType.F32, 512, 128, 128, 128);
        BmmHeuristics.Plan p = BmmHeuristics.plan(s, A100);
        assertEquals(1, p.mats());
        assertEquals(256, p.threads());
        assertEquals(2 * 128 * 132 * 4, p.smemBytes());
        assertNull(BmmHeuristics.customUnsupportedReason(s, A100));
    }

    @Property(tries = 300)
    void plansAreLaunchable(@ForAll @IntRange(min = 1, max = 20000) int batch, @ForAll @IntRange(min = 1, max = 128) int m,
                            @ForAll @IntRange(min = 1, max = 128) int n, @ForAll @IntRange(min = 1, max = 128) int k,
                            @ForAll @IntRange(min = 0, max = 2) int dt, @ForAll boolean ta, @ForAll boolean tb, @ForAll boolean shared) {
        DType dtype = new DType[] {DType.F16, DType.BF16, DType.F32}[dt];
        BmmShape s = BmmShape.of(dtype, batch, m, n, k).withTransposes(ta, tb).withSharedB(shared);
        for (DeviceInfo info : new DeviceInfo[] {H100, A100}) {
            BmmHeuristics.Plan p = BmmHeuristics.plan(s, info);
            assertTrue(p.mats() >= 1 && p.mats() <= batch, "mats " + p);
            assertTrue(p.threads() >= 32 && p.threads() <= 256 && p.threads() % 32 == 0, "threads " + p);
            assertEquals((batch + p.mats() - 1) / p.mats(), p.grid());
            assertTrue(p.smemBytes() <= info.smemPerBlockOptin(), "smem " + p);
            assertTrue(p.mats() == 1 || p.smemBytes() <= 48 * 1024, "several matrices stay within 48 KiB: " + p);
            assertNull(BmmHeuristics.customUnsupportedReason(s, info));
            Decision d = BmmHeuristics.decide(s, info);
            assertTrue(d.backend() == Backend.CUSTOM || d.backend() == Backend.VENDOR);
            assertTrue(!d.reason().isBlank());
        }
    }

    @Test void forcedBackendPropertyIsApplied() {
        BmmShape s = BmmShape.of(DType.F16, 8192, 8, 8, 8);
        System.setProperty(Backend.PROPERTY, "vendor");
        try {
            assertEquals(Backend.VENDOR, Bmm.decide(s, H100, Backend.AUTO).backend());
            assertEquals(Backend.CUSTOM, Bmm.decide(s, H100, Backend.CUSTOM).backend());
            System.setProperty(Backend.PROPERTY, "bogus");
            assertThrows(ArgumentException.class, () -> Bmm.decide(s, H100, Backend.AUTO));
        } finally {
            System.clearProperty(Backend.PROPERTY);
        }
    }

    @Test void fragRowsNeedNnWholeChunksMoreThanHalfASliceAndAlignedBAndC() {
        BmmShape s16 = BmmShape.of(DType.F16, 2048, 16, 16, 16);
        assertTrue(BmmHeuristics.fragRows(s16, 16, 0, 256));
        assertTrue(BmmHeuristics.fragRows(BmmShape.of(DType.BF16, 5, 6, 12, 16), 16, 8, 16));   // n = 12: 3 of 4 lanes
        assertFalse(BmmHeuristics.fragRows(BmmShape.of(DType.F16, 2048, 8, 8, 8), 16, 0, 0));    // n = 8: half the slice
        assertFalse(BmmHeuristics.fragRows(BmmShape.of(DType.F16, 2048, 16, 14, 16), 16, 0, 0)); // n = 14: a partial chunk
        assertFalse(BmmHeuristics.fragRows(s16, 16, 4, 0));                                     // B on 4 bytes
        assertFalse(BmmHeuristics.fragRows(s16, 16, 0, 2));                                     // C on 2 bytes
        assertFalse(BmmHeuristics.fragRows(s16.withTransposes(false, true), 16, 0, 0));
        assertFalse(BmmHeuristics.fragRows(s16.withTransposes(true, false), 16, 0, 0));
        assertFalse(BmmHeuristics.fragRows(BmmShape.of(DType.F32, 2048, 16, 16, 16), 16, 0, 0));
        BmmShape s32 = BmmShape.of(DType.F16, 2048, 32, 32, 32);
        assertTrue(BmmHeuristics.fragRows(s32, 32, 16, 32));
        assertFalse(BmmHeuristics.fragRows(s32, 32, 8, 0));                                     // 16-byte chunks need B on 16
        assertTrue(BmmHeuristics.fragRows(BmmShape.of(DType.F16, 2048, 32, 24, 32), 32, 0, 0));  // n = 24: 3 of 4 lanes
        assertFalse(BmmHeuristics.fragRows(BmmShape.of(DType.F16, 2048, 32, 16, 32), 32, 0, 0)); // n = 16: half of 32
        assertFalse(BmmHeuristics.fragRows(BmmShape.of(DType.F16, 2048, 32, 20, 32), 32, 0, 0)); // n = 20: not a multiple of 8
        assertTrue(BmmHeuristics.fragRows(BmmShape.of(DType.F16, 2048, 32, 20, 32), 16, 0, 0));  // four warps: 4-element chunks
        assertEquals(16, BmmHeuristics.frag32SliceColumns(4));
        assertEquals(32, BmmHeuristics.frag32SliceColumns(2));
        assertEquals(32, BmmHeuristics.frag32SliceColumns(1));
    }
}
