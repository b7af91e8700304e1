package dev.gapfill.ops;

import dev.gapfill.core.DType;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.testing.SystemProperty;
import dev.gapfill.ops.DepthwiseConv3x3.Activation;
import dev.gapfill.ops.DepthwiseConv3x3.Layout;
import dev.gapfill.ops.DepthwiseConv3x3.Problem;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertThrows;

class DepthwiseConv3x3HeuristicsTest {
    private static Problem p(DType dt, Layout l, int n, int c, int h, int w, int s) {
        return new Problem(dt, l, n, c, h, w, s, Activation.SILU, true, false);
    }

    @Test void customForEverySweepRow() {
        // H100 harness: custom faster than the vendor in all 216 rows (closest 1.37x)
        int[][] shapes = {{1, 384, 64, 64}, {8, 96, 112, 112}, {32, 256, 56, 56}, {32, 512, 28, 28}, {64, 1024, 14, 14}, {16, 64, 224, 224}};
        for (DeviceInfo info : new DeviceInfo[] {DeviceInfo.h100ForTests(), DeviceInfo.a100ForTests()}) {
            for (int[] s : shapes) {
                for (Layout l : Layout.values()) {
                    for (DType dt : new DType[] {DType.F16, DType.BF16, DType.F32}) {
                        for (int stride = 1; stride <= 2; stride++) {
                            for (Activation act : Activation.values()) {
                                Problem pr = new Problem(dt, l, s[0], s[1], s[2], s[3], stride, act, true, false);
                                Decision d = DepthwiseConv3x3Heuristics.decide(pr, info);
                                assertEquals(Backend.CUSTOM, d.backend(), pr + " -> " + d);
                                assertTrue(d.reason().contains("H100"), "the rule cites its measurement: " + d.reason());
                            }
                        }
                    }
                }
            }
        }
    }

    @Test void vendorBeforeAmpere() {
        DeviceInfo t4 = new DeviceInfo(0, "Tesla T4", 7, 5, 40, 4L << 20, 64L << 10, 64L << 10, 16L << 30, 13000, 13000, 130100, 91400);
        Decision d = DepthwiseConv3x3Heuristics.decide(p(DType.F16, Layout.NHWC, 1, 64, 8, 8, 1), t4);
        assertEquals(Backend.VENDOR, d.backend());
        assertEquals("cudnn_grouped_conv+bias+swish", d.variant());
        assertNotNull(DepthwiseConv3x3Heuristics.customUnsupported(p(DType.F16, Layout.NHWC, 1, 64, 8, 8, 1), t4));
    }

    @Test void variantsNameLayoutAccessWidthAndStride() {
        // NHWC: the ring kernel (4 ring rows; 2 channels x 4 columns per thread for C <= 128, with SILU 2 x 2 above) for
        // F16/BF16 stride 1, 16-byte copies when C % 8 == 0; the stride-2 ring for vectorisable stride 2 except small
        // F32 SiLU/GELU (2 x 2 for F16/BF16 SiLU/GELU and large shapes, else 2 x 4); nhwc.cu's 2 x 4 for other F16/BF16
        // stride 2 and F32 stride 1, its 2 x 2 for other F32 stride 2
        assertEquals("nhwc_ring4_c2w4_vec_s1", DepthwiseConv3x3Heuristics.customVariant(p(DType.F16, Layout.NHWC, 1, 64, 7, 7, 1)));
        assertEquals("nhwc_ring4_c2w4_scalar_s1", DepthwiseConv3x3Heuristics.customVariant(p(DType.F16, Layout.NHWC, 1, 12, 7, 7, 1)));
        assertEquals("nhwc_ring4_c2w2_vec_s1", DepthwiseConv3x3Heuristics.customVariant(p(DType.F16, Layout.NHWC, 1, 256, 7, 7, 1)));
        assertEquals("nhwc_c2w4_scalar_s2", DepthwiseConv3x3Heuristics.customVariant(p(DType.F16, Layout.NHWC, 1, 13, 7, 7, 2)));
        assertEquals("nhwc_ring4_c2w2_vec_s1", DepthwiseConv3x3Heuristics.customVariant(p(DType.F32, Layout.NHWC, 1, 4, 7, 7, 1)));  // SILU, small
        assertEquals("nhwc_ring4_c2w4_vec_s1", DepthwiseConv3x3Heuristics.customVariant(
                new Problem(DType.F32, Layout.NHWC, 1, 4, 7, 7, 1, Activation.RELU, true, false)));
        assertEquals("nhwc_c2w4_vec_s1", DepthwiseConv3x3Heuristics.customVariant(p(DType.F32, Layout.NHWC, 1, 6, 7, 7, 1)));  // C % 4 != 0
        assertEquals("nhwc_c2w2_vec_s2", DepthwiseConv3x3Heuristics.customVariant(p(DType.F32, Layout.NHWC, 1, 8, 7, 7, 2)));  // SILU
        assertEquals("nhwc_ring4_c2w4_vec_s2", DepthwiseConv3x3Heuristics.customVariant(
                new Problem(DType.F32, Layout.NHWC, 1, 8, 7, 7, 2, Activation.RELU, true, false)));
        assertEquals("nhwc_ring4_c2w2_vec_s2", DepthwiseConv3x3Heuristics.customVariant(p(DType.F16, Layout.NHWC, 1, 64, 7, 7, 2)));  // SILU
        assertEquals("nhwc_ring4_c2w4_vec_s2", DepthwiseConv3x3Heuristics.customVariant(
                new Problem(DType.BF16, Layout.NHWC, 1, 64, 7, 7, 2, Activation.RELU6, false, false)));
        assertEquals("nhwc_c2w2_vec_s2", DepthwiseConv3x3Heuristics.customVariant(p(DType.F32, Layout.NHWC, 1, 6, 7, 7, 2)));
        assertEquals("nhwc_ring4_c2w4_scalar_s1", DepthwiseConv3x3Heuristics.customVariant(p(DType.BF16, Layout.NHWC, 1, 6, 7, 7, 1)));
        // NCHW accesses run along W and never cross a row: W = 56 is 7 vectors of 8 halves; W' = 28 at stride 2 takes 4
        assertEquals("nchw_v8_s1", DepthwiseConv3x3Heuristics.customVariant(p(DType.F16, Layout.NCHW, 1, 8, 72, 64, 1)));  // SILU
        assertEquals("nchw_v4_s2", DepthwiseConv3x3Heuristics.customVariant(p(DType.F16, Layout.NCHW, 1, 8, 56, 56, 2)));
        // F16/BF16 stride 1 below 48 x 48 runs the whole-plane kernel (7 columns per thread at W' = 7, 14, 21, 28)
        assertEquals("nchw_plane_g7_s1", DepthwiseConv3x3Heuristics.customVariant(p(DType.BF16, Layout.NCHW, 1, 8, 14, 14, 1)));
        assertEquals("nchw_v4_s1", DepthwiseConv3x3Heuristics.customVariant(p(DType.F32, Layout.NCHW, 1, 8, 28, 28, 1)));
        // F32 stride 2 runs half the width the shape allows (measured faster): W' = 28 allows 4
        assertEquals("nchw_v2_s2", DepthwiseConv3x3Heuristics.customVariant(p(DType.F32, Layout.NCHW, 1, 8, 56, 56, 2)));
        // odd W at stride 2, or W not even: one column per thread
        assertEquals("nchw_v1_s2", DepthwiseConv3x3Heuristics.customVariant(p(DType.F16, Layout.NCHW, 1, 8, 57, 57, 2)));
        assertEquals("nchw_v1_s2", DepthwiseConv3x3Heuristics.customVariant(p(DType.F16, Layout.NCHW, 1, 8, 7, 7, 2)));
        assertEquals("nchw_v1_s1", DepthwiseConv3x3Heuristics.customVariant(p(DType.F16, Layout.NCHW, 1, 8, 33, 33, 1)));
    }

    @Test void unrolledNchwLoopTakesF16AndBf16ExactActivationsAtWidthEight() {
        Problem relu = q(DType.F16, Layout.NCHW, 16, 64, 224, 224, 1, Activation.RELU);
        assertTrue(DepthwiseConv3x3Heuristics.useNchwUnroll3(relu, 8));
        assertEquals("nchw_v8u3_s1", DepthwiseConv3x3Heuristics.customVariant(relu));
        assertEquals("nchw_v8u3_s1", DepthwiseConv3x3Heuristics.customVariant(q(DType.BF16, Layout.NCHW, 8, 96, 112, 112, 1, Activation.NONE)));
        assertEquals("nchw_v8u3_s1", DepthwiseConv3x3Heuristics.customVariant(q(DType.BF16, Layout.NCHW, 1, 8, 64, 64, 1, Activation.RELU6)));
        // smooth activations (measured 1.01-1.05x the rolled loop's time), F32 (1.09-1.37x), stride 2, narrower accesses,
        // NHWC and the plane kernel's sizes keep their kernels
        assertEquals("nchw_v8_s1", DepthwiseConv3x3Heuristics.customVariant(q(DType.F16, Layout.NCHW, 16, 64, 224, 224, 1, Activation.SILU)));
        assertEquals("nchw_v4_s1", DepthwiseConv3x3Heuristics.customVariant(q(DType.F32, Layout.NCHW, 16, 64, 224, 224, 1, Activation.GELU_ERF)));
        assertEquals("nchw_v8_s2", DepthwiseConv3x3Heuristics.customVariant(q(DType.F16, Layout.NCHW, 16, 64, 224, 224, 2, Activation.RELU)));
        assertEquals("nchw_v4_s1", DepthwiseConv3x3Heuristics.customVariant(q(DType.F16, Layout.NCHW, 1, 8, 60, 60, 1, Activation.RELU)));
        assertFalse(DepthwiseConv3x3Heuristics.useNchwUnroll3(relu, 4));  // the launch narrowed the access for alignment
        assertFalse(DepthwiseConv3x3Heuristics.useNchwUnroll3(q(DType.F16, Layout.NHWC, 16, 64, 224, 224, 1, Activation.RELU), 8));
        assertTrue(DepthwiseConv3x3Heuristics.customVariant(q(DType.F16, Layout.NCHW, 32, 784, 40, 40, 1, Activation.RELU)).startsWith("nchw_plane"));
        // the switch: off everywhere, or on for every activation (never for F32 or other widths)
        SystemProperty.with(DepthwiseConv3x3Heuristics.NCHW_UNROLL3_PROPERTY, "false", () ->
                assertEquals("nchw_v8_s1", DepthwiseConv3x3Heuristics.customVariant(relu)));
        SystemProperty.with(DepthwiseConv3x3Heuristics.NCHW_UNROLL3_PROPERTY, "true", () -> {
            assertEquals("nchw_v8u3_s1", DepthwiseConv3x3Heuristics.customVariant(q(DType.F16, Layout.NCHW, 16, 64, 224, 224, 1, Activation.GELU_ERF)));
            assertEquals("nchw_v4_s1", DepthwiseConv3x3Heuristics.customVariant(q(DType.F32, Layout.NCHW, 16, 64, 224, 224, 1, Activation.GELU_TANH)));
        });
    }

    @Test void strideTwoStripsFollowTheWaveCountWhereTheOccupancyIsKnown() {
        DeviceInfo h100 = DeviceInfo.h100ForTests();
        int sms = h100.smCount();
        // the probe's cases (H100 occupancy: 4 blocks of 256 per SM for F32 v1/v2 and F16 v4, 2 for F16 v8)
        Problem f32 = q(DType.F32, Layout.NCHW, 8, 96, 112, 112, 2, Activation.NONE);  // H' 56, v2: 7 rows by the target
        assertEquals(7, DepthwiseConv3x3Heuristics.nchwGrid(f32, 2, sms).rowsPerStrip());
        assertEquals(5, DepthwiseConv3x3Heuristics.nchwGrid(f32, 2, sms, 4).rowsPerStrip());   // measured 0.929x
        Problem f16 = q(DType.F16, Layout.NCHW, 32, 256, 56, 56, 2, Activation.NONE);  // H' 28, v4: 7 rows by the target
        assertEquals(4, DepthwiseConv3x3Heuristics.nchwGrid(f16, 4, sms, 4).rowsPerStrip());   // measured 0.924x
        DepthwiseConv3x3Heuristics.Grid g = DepthwiseConv3x3Heuristics.nchwGrid(f16, 4, sms, 4);
        assertEquals(32L * 256 * 7 * 7, g.threads());                                          // 7 strips of 4 rows
        // kept where the target's height measured fastest
        assertEquals(14, DepthwiseConv3x3Heuristics.nchwGrid(p(DType.F32, Layout.NCHW, 64, 1024, 28, 28, 2), 1, sms, 4).rowsPerStrip());
        assertEquals(8, DepthwiseConv3x3Heuristics.nchwGrid(p(DType.F16, Layout.NCHW, 16, 64, 224, 224, 2), 8, sms, 2).rowsPerStrip());
        assertEquals(16, DepthwiseConv3x3Heuristics.nchwGrid(p(DType.F32, Layout.NCHW, 16, 64, 224, 224, 2), 2, sms, 4).rowsPerStrip());
        // F32 SiLU/GELU keep the target's height (their epilogues set the time); F16 SiLU does not
        assertEquals(14, DepthwiseConv3x3Heuristics.nchwGrid(q(DType.F32, Layout.NCHW, 32, 256, 56, 56, 2, Activation.GELU_ERF), 2, sms, 4)
                .rowsPerStrip());
        assertEquals(4, DepthwiseConv3x3Heuristics.nchwGrid(q(DType.F32, Layout.NCHW, 32, 256, 56, 56, 2, Activation.RELU6), 2, sms, 4)
                .rowsPerStrip());
        assertEquals(4, DepthwiseConv3x3Heuristics.nchwGrid(q(DType.F16, Layout.NCHW, 32, 256, 56, 56, 2, Activation.SILU), 4, sms, 4)
                .rowsPerStrip());
        // stride 1, unknown occupancy and the property keep the target's height
        assertEquals(8, DepthwiseConv3x3Heuristics.nchwGrid(p(DType.F16, Layout.NCHW, 8, 96, 112, 112, 1), 8, sms, 3).rowsPerStrip());
        assertEquals(7, DepthwiseConv3x3Heuristics.nchwGrid(f32, 2, sms, 0).rowsPerStrip());
        SystemProperty.with(DepthwiseConv3x3Heuristics.NCHW_ROWS_PROPERTY, "16",
                () -> assertEquals(7, DepthwiseConv3x3Heuristics.nchwGrid(f32, 2, sms, 4).rowsPerStrip()));
        // every height the rule picks covers H' with balanced strips
        for (int ho = 1; ho <= 130; ho++) {
            for (int rps : new int[] {2, 7, 8, 14, 16}) {
                for (long per : new long[] {1, 777, 21504, 1L << 20}) {
                    int r = DepthwiseConv3x3Heuristics.nchwStrideTwoRows(ho, rps, per, 528);
                    assertTrue(r >= Math.min(2, rps) && r <= rps, ho + " " + rps + " " + per + " -> " + r);
                    int strips = (ho + r - 1) / r;
                    assertTrue(r == rps || (ho + strips - 1) / strips == r, ho + " " + rps + " " + per + " -> " + r);
                }
            }
        }
    }

    @Test void theStripRowsPropertyOverridesTheTargetAndRejectsNonsense() {
        DeviceInfo h100 = DeviceInfo.h100ForTests();
        Problem f32 = p(DType.F32, Layout.NCHW, 8, 96, 112, 112, 1);
        assertEquals(8, DepthwiseConv3x3Heuristics.nchwGrid(f32, 4, h100.smCount()).rowsPerStrip());
        assertEquals(16, DepthwiseConv3x3Heuristics.nchwGrid(p(DType.F32, Layout.NCHW, 16, 64, 224, 224, 2), 2, h100.smCount()).rowsPerStrip());
        // 112 output rows: 7 strips of 16 with 16; with 12, ceil(112 / 12) = 10 strips of ceil(112 / 10) = 12 rows
        SystemProperty.with(DepthwiseConv3x3Heuristics.NCHW_ROWS_PROPERTY, "16",
                () -> assertEquals(16, DepthwiseConv3x3Heuristics.nchwGrid(f32, 4, h100.smCount()).rowsPerStrip()));
        SystemProperty.with(DepthwiseConv3x3Heuristics.NCHW_ROWS_PROPERTY, "12",
                () -> assertEquals(12, DepthwiseConv3x3Heuristics.nchwGrid(f32, 4, h100.smCount()).rowsPerStrip()));
        for (String bad : new String[] {"0", "-3", "many"}) {
            SystemProperty.with(DepthwiseConv3x3Heuristics.NCHW_ROWS_PROPERTY, bad, () -> {
                dev.gapfill.core.ArgumentException e = assertThrows(dev.gapfill.core.ArgumentException.class,
                        () -> DepthwiseConv3x3Heuristics.nchwGrid(f32, 4, h100.smCount()));
                assertTrue(e.getMessage().contains(DepthwiseConv3x3Heuristics.NCHW_ROWS_PROPERTY), e.getMessage());
            });
        }
    }

    @Test void stripsAreBalancedAndShortenedForSmallGrids() {
        DeviceInfo h100 = DeviceInfo.h100ForTests();
        // f16 NCHW 32x256x56x56: 7 strips of 8 rows; 1x384x64x64: too few threads, strips of 2
        DepthwiseConv3x3Heuristics.Grid big = DepthwiseConv3x3Heuristics.nchwGrid(p(DType.F16, Layout.NCHW, 32, 256, 56, 56, 1), 8, h100.smCount());
        assertEquals(8, big.rowsPerStrip());
        assertEquals(32L * 256 * 7 * 7, big.threads());
        DepthwiseConv3x3Heuristics.Grid small = DepthwiseConv3x3Heuristics.nchwGrid(p(DType.F16, Layout.NCHW, 1, 384, 64, 64, 1), 8, h100.smCount());
        assertEquals(2, small.rowsPerStrip());
        // H' = 14: one strip of 14 would leave 16 rows' worth of registers idle; balanced strips of 7
        assertEquals(7, DepthwiseConv3x3Heuristics.nchwGrid(p(DType.F16, Layout.NCHW, 64, 1024, 14, 14, 1), 2, h100.smCount()).rowsPerStrip());
        // NHWC chunk: all channel groups up to 64, else a divisor in [16, 64], else 32
        assertEquals(64, DepthwiseConv3x3Heuristics.nhwcGrid(p(DType.F16, Layout.NHWC, 32, 256, 56, 56, 1), h100.smCount()).chunk());
        assertEquals(48, DepthwiseConv3x3Heuristics.nhwcGrid(p(DType.F16, Layout.NHWC, 1, 384, 64, 64, 1), h100.smCount()).chunk());
        assertEquals(32, DepthwiseConv3x3Heuristics.nhwcGrid(p(DType.F16, Layout.NHWC, 1, 4 * 67, 8, 8, 1), h100.smCount()).chunk());
        // every output column group and channel group is covered
        for (int c : new int[] {1, 3, 8, 13, 64, 260, 1024}) {
            for (int w : new int[] {1, 7, 17, 56}) {
                Problem pr = p(DType.BF16, Layout.NHWC, 2, c, 9, w, 1);
                DepthwiseConv3x3Heuristics.Grid g = DepthwiseConv3x3Heuristics.nhwcGrid(pr, h100.smCount());
                long groups = (c + 3) / 4;
                assertTrue(g.threads() >= 2L * groups * ((w + 1) / 2) * ((9 + g.rowsPerStrip() - 1) / g.rowsPerStrip()), pr + " " + g);
                assertTrue(g.blocks() * DepthwiseConv3x3Heuristics.BLOCK >= g.threads(), pr + " " + g);
            }
        }
    }

    @Test void ringOnlyForHalfTypesNhwcStrideOne() {
        assertTrue(DepthwiseConv3x3Heuristics.useRing(p(DType.F16, Layout.NHWC, 1, 8, 8, 8, 1)));
        assertTrue(DepthwiseConv3x3Heuristics.useRing(p(DType.BF16, Layout.NHWC, 1, 3, 1, 1, 1)));
        assertTrue(DepthwiseConv3x3Heuristics.useRing(p(DType.F32, Layout.NHWC, 1, 8, 8, 8, 1)));
        assertTrue(DepthwiseConv3x3Heuristics.useRing(p(DType.F32, Layout.NHWC, 1, 1028, 8, 8, 1)));
        assertTrue(!DepthwiseConv3x3Heuristics.useRing(p(DType.F32, Layout.NHWC, 1, 10, 8, 8, 1)));  // C % 4 != 0: nhwc.cu
        assertTrue(!DepthwiseConv3x3Heuristics.useRing(p(DType.F32, Layout.NHWC, 1, 8, 8, 8, 2)));
        assertTrue(!DepthwiseConv3x3Heuristics.useRing(p(DType.F16, Layout.NHWC, 1, 8, 8, 8, 2)));
        assertTrue(!DepthwiseConv3x3Heuristics.useRing(p(DType.F16, Layout.NCHW, 1, 8, 8, 8, 1)));
    }

    @Test void ringGeometryOfTheSweepShapesIsTheMeasuredOne() {
        // the launches of the H100 A/B (cuda-native/dev/depthwise_conv3x3/h100-241f285-ring-cpt2.txt, blocks per SM from
        // the CUDA runtime's occupancy API): {N, H, W, C, act (0 NONE, 1 SILU)} -> config (0 C4W2, 1 C2W4, 2 C2W2),
        // cgs, tws, col tiles, chunks, strips, rows per strip, smem, blocks per SM
        int[][] rows = {
            {1, 64, 64, 384, 0, 0, 32, 8, 4, 3, 22, 3, 18432, 2},
            {32, 56, 56, 256, 0, 0, 32, 7, 4, 2, 2, 28, 16384, 2},
            {32, 28, 28, 512, 0, 0, 32, 7, 2, 4, 2, 14, 16384, 2},
            {64, 14, 14, 1024, 0, 0, 32, 7, 1, 8, 1, 14, 16384, 2},
            {8, 112, 112, 96, 0, 1, 48, 4, 7, 1, 14, 8, 13824, 4},
            {8, 112, 112, 96, 1, 1, 48, 4, 7, 1, 14, 8, 13824, 4},
            {16, 224, 224, 64, 1, 1, 32, 8, 7, 1, 7, 32, 17408, 3},
            {1, 64, 64, 384, 1, 2, 64, 4, 8, 3, 22, 3, 10240, 4},
            {32, 56, 56, 256, 1, 2, 64, 4, 7, 2, 2, 28, 10240, 4},
            {32, 28, 28, 512, 1, 2, 64, 2, 7, 4, 2, 14, 6144, 8},
            {64, 14, 14, 1024, 1, 2, 64, 4, 2, 8, 1, 14, 10240, 4},
        };
        DepthwiseConv3x3Heuristics.RingConfig[] cfgs = DepthwiseConv3x3Heuristics.RingConfig.values();
        for (DType dt : new DType[] {DType.F16, DType.BF16}) {
            for (int[] r : rows) {
                Problem pr = new Problem(dt, Layout.NHWC, r[0], r[3], r[1], r[2], 1, r[4] == 0 ? Activation.NONE : Activation.SILU,
                        true, false);
                DepthwiseConv3x3Heuristics.RingGrid g = DepthwiseConv3x3Heuristics.ringGrid(pr, DeviceInfo.h100ForTests());
                String m = pr + " " + g;
                assertEquals(cfgs[r[5]], g.config(), m);
                assertEquals(r[6], g.cgs(), m);
                assertEquals(r[7], g.tws(), m);
                assertEquals(r[8], g.colTiles(), m);
                assertEquals(r[9], g.chunks(), m);
                assertEquals(r[10], g.strips(), m);
                assertEquals(r[11], g.rowsPerStrip(), m);
                assertEquals(r[12] * dt.bytes() / 2, g.smemBytes(), m);
                assertEquals(r[13], g.blocksPerSm(), m);
                assertEquals((long) r[8] * r[9] * r[10] * r[0], g.blocks(), m);
            }
        }
    }

    @Test void ringConfigByChannelsAndActivation() {
        // C <= 128: 2 x 4 for every activation; above, 2 x 2 for the smooth activations and 4 x 2 for the exact ones
        for (Activation a : Activation.values()) {
            assertEquals(DepthwiseConv3x3Heuristics.RingConfig.C2W4, DepthwiseConv3x3Heuristics.ringConfig(
                    new Problem(DType.F16, Layout.NHWC, 1, 128, 8, 8, 1, a, false, false)), a.name());
            assertEquals(a.isExact() ? DepthwiseConv3x3Heuristics.RingConfig.C4W2 : DepthwiseConv3x3Heuristics.RingConfig.C2W2,
                    DepthwiseConv3x3Heuristics.ringConfig(new Problem(DType.BF16, Layout.NHWC, 1, 136, 8, 8, 1, a, false, false)),
                    a.name());
        }
        assertEquals("dwconv3x3_nhwc_ring_f16_s1", DepthwiseConv3x3Heuristics.RingConfig.C4W2.symbol(DType.F16));
        assertEquals("dwconv3x3_nhwc_ring_c2w4_bf16_s1", DepthwiseConv3x3Heuristics.RingConfig.C2W4.symbol(DType.BF16));
        assertEquals("dwconv3x3_nhwc_ring_c2w2_f16_s1", DepthwiseConv3x3Heuristics.RingConfig.C2W2.symbol(DType.F16));
        // F32: small problems, 2 x 2 for SiLU/GELU and 2 x 4 for the exact activations, whatever C
        for (Activation a : Activation.values()) {
            for (int c : new int[] {4, 128, 136, 1024}) {
                assertEquals(a.isExact() ? DepthwiseConv3x3Heuristics.RingConfig.C2W4_F32 : DepthwiseConv3x3Heuristics.RingConfig.C2W2_F32,
                        DepthwiseConv3x3Heuristics.ringConfig(new Problem(DType.F32, Layout.NHWC, 1, c, 8, 8, 1, a, false, false)), a + " " + c);
            }
        }
        assertEquals("dwconv3x3_nhwc_ring_c2w4_f32_s1", DepthwiseConv3x3Heuristics.RingConfig.C2W4_F32.symbol(DType.F32));
        assertEquals("dwconv3x3_nhwc_ring_c2w2_f32_s1", DepthwiseConv3x3Heuristics.RingConfig.C2W2_F32.symbol(DType.F32));
        Problem f32 = p(DType.F32, Layout.NHWC, 1, 64, 9, 9, 1);
        SystemProperty.with(DepthwiseConv3x3Heuristics.RING_F32_GEOMETRY_PROPERTY, "c2w2", () -> {
            assertEquals(DepthwiseConv3x3Heuristics.RingConfig.C2W2_F32, DepthwiseConv3x3Heuristics.ringConfig(f32));
            assertEquals("nhwc_ring4_c2w2_vec_s1", DepthwiseConv3x3Heuristics.customVariant(f32));
            // 100 registers on sm_90a: 2 blocks of 256 threads, a grid covering every output
            DepthwiseConv3x3Heuristics.RingGrid g = DepthwiseConv3x3Heuristics.ringGrid(p(DType.F32, Layout.NHWC, 16, 64, 224, 224, 1), DeviceInfo.h100ForTests());
            assertEquals(2, g.config().columnsPerThread());
            assertEquals(256, g.threads());
            assertEquals(2, g.blocksPerSm());
            assertTrue((long) g.tws() * 2 * g.colTiles() >= 224 && (long) g.strips() * g.rowsPerStrip() >= 224, g.toString());
            assertEquals(DepthwiseConv3x3Heuristics.RingConfig.C2W4, DepthwiseConv3x3Heuristics.ringConfig(p(DType.F16, Layout.NHWC, 1, 64, 9, 9, 1)));
        });
        // the rule: F32 SiLU/GELU below 10M outputs take 2 x 2 (p() is SILU), everything else 2 x 4; the property forces either
        assertEquals(DepthwiseConv3x3Heuristics.RingConfig.C2W2_F32, DepthwiseConv3x3Heuristics.ringConfig(f32));
        SystemProperty.with(DepthwiseConv3x3Heuristics.RING_F32_GEOMETRY_PROPERTY, "c2w4", () ->
                assertEquals(DepthwiseConv3x3Heuristics.RingConfig.C2W4_F32, DepthwiseConv3x3Heuristics.ringConfig(f32)));
        int[][] sweep = {{1, 384, 64, 64}, {8, 96, 112, 112}, {32, 256, 56, 56}, {32, 512, 28, 28}, {64, 1024, 14, 14}, {16, 64, 224, 224}};
        for (int[] sh : sweep) {
            for (Activation a : Activation.values()) {
                Problem pr = new Problem(DType.F32, Layout.NHWC, sh[0], sh[1], sh[2], sh[3], 1, a, true, false);
                boolean small = sh[0] == 1 || sh[0] == 8;  // 1.6M and 9.6M outputs; the others 12.8M and more
                assertEquals(small, pr.outputElements() < DepthwiseConv3x3Heuristics.RING_F32_C2W2_MAX_OUTPUTS, pr.toString());
                assertEquals(small && !a.isExact() ? DepthwiseConv3x3Heuristics.RingConfig.C2W2_F32 : DepthwiseConv3x3Heuristics.RingConfig.C2W4_F32,
                        DepthwiseConv3x3Heuristics.ringConfig(pr), pr.toString());
            }
        }
    }

    /**
     * The stride-2 ring: NHWC stride 2 with C a multiple of 16 bytes of channels, F16/BF16 with any activation, F32 with
     * an exact one, and F32 SiLU/GELU from 4M outputs (smaller F32 SiLU/GELU keep nhwc.cu, which the H100 sweeps
     * measured as fast there); the 2 x 2 geometry for F16/BF16 SiLU/GELU and from 4M outputs, else 2 x 4; both
     * properties force their choice; the grid of each geometry covers every output row and column (the stride-1 rules
     * over the output dimensions) with rows of 2·TW + 1 input pixels.
     */
    @Test void strideTwoRingRulesAndItsGridCoversEveryOutput() {
        Problem half = p(DType.F16, Layout.NHWC, 1, 64, 9, 9, 2);  // SILU
        Problem f32Silu = p(DType.F32, Layout.NHWC, 1, 64, 9, 9, 2);
        assertTrue(DepthwiseConv3x3Heuristics.useRingS2(half));
        assertEquals("nhwc_ring4_c2w2_vec_s2", DepthwiseConv3x3Heuristics.customVariant(half));
        assertTrue(DepthwiseConv3x3Heuristics.useRingS2(p(DType.BF16, Layout.NHWC, 1, 64, 9, 9, 2)));
        assertFalse(DepthwiseConv3x3Heuristics.useRingS2(f32Silu));
        assertEquals("nhwc_c2w2_vec_s2", DepthwiseConv3x3Heuristics.customVariant(f32Silu));
        for (Activation a : Activation.values()) {
            Problem f32 = new Problem(DType.F32, Layout.NHWC, 1, 64, 9, 9, 2, a, true, false);
            assertEquals(a.isExact(), DepthwiseConv3x3Heuristics.useRingS2(f32), a.name());
            assertTrue(DepthwiseConv3x3Heuristics.useRingS2(new Problem(DType.F16, Layout.NHWC, 1, 64, 9, 9, 2, a, false, true)), a.name());
        }
        // the sweep's shapes: 8x112x112x96 (2,408,448 outputs) below the 2 x 2 threshold, 32x56x56x256 (6,422,528) and
        // 16x224x224x64 above it
        long threshold = DepthwiseConv3x3Heuristics.RING_S2_C2W2_MIN_OUTPUTS;
        for (DType dt : new DType[] {DType.F16, DType.BF16, DType.F32}) {
            for (Activation a : new Activation[] {Activation.NONE, Activation.RELU, Activation.SILU, Activation.GELU_ERF}) {
                for (int[] sh : new int[][] {{8, 96, 112, 112}, {32, 256, 56, 56}, {16, 64, 224, 224}}) {
                    Problem pr = new Problem(dt, Layout.NHWC, sh[0], sh[1], sh[2], sh[3], 2, a, true, false);
                    boolean large = pr.outputElements() >= threshold;
                    assertEquals(sh[0] != 8, large, pr.toString());
                    boolean ring = dt != DType.F32 || a.isExact() || large;
                    boolean c2w2 = large || dt != DType.F32 && !a.isExact();
                    assertEquals(ring, DepthwiseConv3x3Heuristics.useRingS2(pr), pr.toString());
                    assertEquals(ring ? (c2w2 ? "nhwc_ring4_c2w2_vec_s2" : "nhwc_ring4_c2w4_vec_s2") : "nhwc_c2w2_vec_s2",
                            DepthwiseConv3x3Heuristics.customVariant(pr), pr.toString());
                }
            }
        }
        assertFalse(DepthwiseConv3x3Heuristics.useRingS2(p(DType.F16, Layout.NHWC, 1, 12, 9, 9, 2)));  // 12 % 8 != 0
        assertEquals("nhwc_c2w4_vec_s2", DepthwiseConv3x3Heuristics.customVariant(p(DType.F16, Layout.NHWC, 1, 12, 9, 9, 2)));  // nhwc.cu
        assertFalse(DepthwiseConv3x3Heuristics.useRingS2(p(DType.F16, Layout.NHWC, 1, 64, 9, 9, 1)));
        assertFalse(DepthwiseConv3x3Heuristics.useRingS2(p(DType.F16, Layout.NCHW, 1, 64, 9, 9, 2)));
        SystemProperty.with(DepthwiseConv3x3Heuristics.RING_S2_PROPERTY, "true", () -> {
            assertTrue(DepthwiseConv3x3Heuristics.useRingS2(f32Silu));
            assertTrue(DepthwiseConv3x3Heuristics.useRingS2(p(DType.F32, Layout.NHWC, 1, 12, 9, 9, 2)));
            assertFalse(DepthwiseConv3x3Heuristics.useRingS2(p(DType.F16, Layout.NHWC, 1, 12, 9, 9, 2)));  // 12 % 8 != 0
            assertFalse(DepthwiseConv3x3Heuristics.useRingS2(p(DType.F16, Layout.NHWC, 1, 64, 9, 9, 1)));
            assertFalse(DepthwiseConv3x3Heuristics.useRingS2(p(DType.F16, Layout.NCHW, 1, 64, 9, 9, 2)));
        });
        SystemProperty.with(DepthwiseConv3x3Heuristics.RING_S2_PROPERTY, "false", () -> {
            assertFalse(DepthwiseConv3x3Heuristics.useRingS2(half));
            assertEquals("nhwc_c2w4_vec_s2", DepthwiseConv3x3Heuristics.customVariant(half));
        });
        assertEquals("dwconv3x3_nhwc_ring_c2w4_bf16_s2", DepthwiseConv3x3Heuristics.ringS2Symbol(DepthwiseConv3x3Heuristics.RingConfig.C2W4, DType.BF16));
        assertEquals("dwconv3x3_nhwc_ring_c2w2_f32_s2", DepthwiseConv3x3Heuristics.ringS2Symbol(DepthwiseConv3x3Heuristics.RingConfig.C2W2, DType.F32));
        assertThrows(IllegalArgumentException.class, () -> DepthwiseConv3x3Heuristics.ringS2Symbol(DepthwiseConv3x3Heuristics.RingConfig.C4W2, DType.F16));
        assertEquals(DepthwiseConv3x3Heuristics.RingConfig.C2W2, DepthwiseConv3x3Heuristics.ringS2Config(half));
        SystemProperty.with(DepthwiseConv3x3Heuristics.RING_S2_GEOMETRY_PROPERTY, "c2w4", () -> {
            assertEquals(DepthwiseConv3x3Heuristics.RingConfig.C2W4, DepthwiseConv3x3Heuristics.ringS2Config(half));
            assertEquals("nhwc_ring4_c2w4_vec_s2", DepthwiseConv3x3Heuristics.customVariant(half));
        });
        Problem relu = new Problem(DType.F16, Layout.NHWC, 1, 64, 9, 9, 2, Activation.RELU, true, false);
        assertEquals(DepthwiseConv3x3Heuristics.RingConfig.C2W4, DepthwiseConv3x3Heuristics.ringS2Config(relu));
        SystemProperty.with(DepthwiseConv3x3Heuristics.RING_S2_GEOMETRY_PROPERTY, "c2w2", () -> {
            assertEquals(DepthwiseConv3x3Heuristics.RingConfig.C2W2, DepthwiseConv3x3Heuristics.ringS2Config(relu));
            assertEquals("nhwc_ring4_c2w2_vec_s2", DepthwiseConv3x3Heuristics.customVariant(relu));
        });
        for (String geometry : new String[] {"c2w4", "c2w2"}) {
            int wc = geometry.equals("c2w4") ? 4 : 2;
            SystemProperty.with(DepthwiseConv3x3Heuristics.RING_S2_GEOMETRY_PROPERTY, geometry, () -> {
                for (DeviceInfo info : new DeviceInfo[] {DeviceInfo.h100ForTests(), DeviceInfo.a100ForTests()}) {
                    for (DType dt : new DType[] {DType.F16, DType.F32}) {
                        for (int c : new int[] {8, 64, 128, 136, 1024}) {
                            for (int h : new int[] {1, 2, 5, 17, 112, 1000}) {
                                for (int w : new int[] {1, 2, 7, 17, 56, 513}) {
                                    Problem pr = new Problem(dt, Layout.NHWC, 2, c, h, w, 2, Activation.NONE, true, false);
                                    DepthwiseConv3x3Heuristics.RingGrid g = DepthwiseConv3x3Heuristics.ringGridS2(pr, info);
                                    String m = geometry + " " + pr + " " + g;
                                    int ho = (h + 1) / 2, wo = (w + 1) / 2;
                                    assertEquals(2, g.config().channelsPerThread(), m);
                                    assertEquals(wc, g.config().columnsPerThread(), m);
                                    assertTrue((long) g.cgs() * 2 * g.chunks() >= c && (long) g.cgs() * 2 * (g.chunks() - 1) < c, m);
                                    assertTrue((long) g.tws() * wc * g.colTiles() >= wo && (long) g.tws() * wc * (g.colTiles() - 1) < wo, m);
                                    assertTrue((long) g.strips() * g.rowsPerStrip() >= ho && (long) (g.strips() - 1) * g.rowsPerStrip() < ho, m);
                                    assertTrue(g.threads() == g.cgs() * g.tws() && g.threads() <= 256, m);
                                    assertEquals(4 * (2 * g.tws() * wc + 1) * g.cgs() * 2 * dt.bytes(), g.smemBytes(), m);
                                    assertTrue(g.smemBytes() <= info.smemPerBlockOptin(), m);
                                    assertEquals((long) g.colTiles() * g.chunks() * g.strips() * 2, g.blocks(), m);
                                    assertTrue(g.blocksPerSm() >= 1 && g.blocksPerSm() <= 32, m);
                                }
                            }
                        }
                    }
                }
            });
        }
        // ptxas's counts on sm_90a: c2w2 F16/BF16 (70 registers) fit 3 blocks of 256 threads per SM, c2w4 (108) 2 of 224
        DeviceInfo h100 = DeviceInfo.h100ForTests();
        Problem wide = p(DType.F16, Layout.NHWC, 16, 64, 224, 224, 2);
        SystemProperty.with(DepthwiseConv3x3Heuristics.RING_S2_GEOMETRY_PROPERTY, "c2w2", () -> {
            assertEquals(256, DepthwiseConv3x3Heuristics.ringGridS2(wide, h100).threads());
            assertEquals(3, DepthwiseConv3x3Heuristics.ringGridS2(wide, h100).blocksPerSm());
        });
        SystemProperty.with(DepthwiseConv3x3Heuristics.RING_S2_GEOMETRY_PROPERTY, "c2w4", () -> {
            assertEquals(224, DepthwiseConv3x3Heuristics.ringGridS2(wide, h100).threads());  // 7 x 16 columns: 112 exactly
            assertEquals(2, DepthwiseConv3x3Heuristics.ringGridS2(wide, h100).blocksPerSm());
        });
    }

    @Test void ringGridCoversEveryOutputWithinTheLaunchLimits() {
        for (DeviceInfo info : new DeviceInfo[] {DeviceInfo.h100ForTests(), DeviceInfo.a100ForTests()}) {
            for (int n : new int[] {1, 3}) {
                for (int c : new int[] {1, 3, 4, 8, 13, 64, 128, 136, 260, 1024}) {
                    for (int h : new int[] {1, 2, 5, 17, 64, 1000}) {
                        for (int w : new int[] {1, 2, 7, 17, 56, 513}) {
                          for (Activation a : new Activation[] {Activation.NONE, Activation.GELU_TANH}) {
                            Problem pr = new Problem(DType.F16, Layout.NHWC, n, c, h, w, 1, a, true, false);
                            DepthwiseConv3x3Heuristics.RingGrid g = DepthwiseConv3x3Heuristics.ringGrid(pr, info);
                            String m = pr + " " + g;
                            int cpt = g.config().channelsPerThread();
                            int wc = g.config().columnsPerThread();
                            assertTrue(g.cgs() >= 1 && g.cgs() * cpt <= 128 && (long) g.cgs() * cpt * g.chunks() >= c
                                    && (long) g.cgs() * cpt * (g.chunks() - 1) < c, "channels covered, no empty chunk: " + m);
                            assertTrue((long) g.tws() * wc * g.colTiles() >= w && (long) g.tws() * wc * (g.colTiles() - 1) < w,
                                    "columns covered, no empty tile: " + m);
                            assertTrue((long) g.strips() * g.rowsPerStrip() >= h && (long) (g.strips() - 1) * g.rowsPerStrip() < h,
                                    "rows covered, no empty strip: " + m);
                            assertEquals(g.cgs() * g.tws(), g.threads(), m);
                            assertTrue(g.threads() >= 1 && g.threads() <= 256, "launch bounds: " + m);
                            assertEquals(4 * (g.tws() * wc + 2) * g.cgs() * cpt * 2, g.smemBytes(), m);
                            assertTrue(g.smemBytes() <= 48 * 1024, "no opt-in shared memory needed: " + m);
                            assertEquals((long) g.colTiles() * g.chunks() * g.strips() * n, g.blocks(), m);
                            assertTrue(g.blocksPerSm() >= 1 && g.blocksPerSm() <= 16, m);
                          }
                        }
                    }
                }
            }
        }
    }

    @Test void ringOccupancyEstimateBoundsByRegistersWarpsBlocksAndSharedMemory() {
        DeviceInfo h100 = DeviceInfo.h100ForTests();
        DeviceInfo ga102 = new DeviceInfo(0, "NVIDIA RTX A6000", 8, 6, 84, 6L << 20, 99L << 10, 100L << 10, 48L << 30, 13000, 13000, 130100, 91400);
        // 128 registers x 256 threads: 2 blocks of 64K registers (what the CUDA runtime reported for the sweep shapes)
        assertEquals(2, Occupancy.blocksPerSm(256, 128, 18432, h100));
        assertEquals(2, Occupancy.blocksPerSm(224, 128, 16384, h100));
        // the 2-channel geometries (runtime, same file): 80 registers x 256 threads 3, x 128 threads 6; 64 x 128: 8
        assertEquals(3, Occupancy.blocksPerSm(256, 80, 18432, h100));
        assertEquals(6, Occupancy.blocksPerSm(128, 80, 10240, h100));
        assertEquals(8, Occupancy.blocksPerSm(128, 64, 6144, h100));
        assertEquals(5, Occupancy.blocksPerSm(192, 64, 7680, h100));
        // small blocks: registers allow 8 of 64 threads, the 16-block cap and shared memory bound the rest
        assertEquals(8, Occupancy.blocksPerSm(64, 128, 4096, h100));
        assertEquals(16, Occupancy.blocksPerSm(2, 128, 256, h100));
        assertEquals(3, Occupancy.blocksPerSm(64, 128, 30000, ga102));  // (100 KiB - 1 KiB) / (30000 + 1 KiB)
        // 48 warps per SM on compute capability 8.6: 6 blocks of 8 warps would fit the warps, registers allow 2
        assertEquals(2, Occupancy.blocksPerSm(256, 128, 18432, ga102));
        assertEquals(1, Occupancy.blocksPerSm(256, 128, 200 * 1024, ga102));  // never below 1
    }

    @Test void widestRowsDoNotOverflowTheGridArithmetic() {
        // one image row of 2^31 - 100 single-channel pixels (N*H*W*C < 2^31 holds): tile counts in long arithmetic
        int w = Integer.MAX_VALUE - 99;
        Problem pr = p(DType.F16, Layout.NHWC, 1, 1, 1, w, 1);
        DepthwiseConv3x3Heuristics.RingGrid g = DepthwiseConv3x3Heuristics.ringGrid(pr, DeviceInfo.h100ForTests());
        assertTrue(g.colTiles() > 0 && (long) g.tws() * g.config().columnsPerThread() * g.colTiles() >= w && g.blocks() > 0, g.toString());
        assertNull(DepthwiseConv3x3Heuristics.customUnsupported(pr, DeviceInfo.h100ForTests()));
        DepthwiseConv3x3Heuristics.Grid n = DepthwiseConv3x3Heuristics.nhwcGrid(p(DType.F32, Layout.NHWC, 1, 1, 1, Integer.MAX_VALUE, 1),
                DeviceInfo.h100ForTests().smCount());
        assertTrue(n.threads() > 0 && n.blocks() > 0, n.toString());
    }

    @Test void aDimensionOf2To31MinusOneAtStrideTwoOrAsChannelsDoesNotWrap() {
        // each admitted (N·C·H·W = 2^31 − 1 elements): (h + 1) / 2 and (C + cpt − 1) / cpt wrapped in int, and the
        // negative grid passed the launch-limit check, so AUTO chose a launch that failed as "internal: bad grid"
        int max = Integer.MAX_VALUE;
        DeviceInfo h100 = DeviceInfo.h100ForTests();
        Problem wideS2 = p(DType.F16, Layout.NCHW, 1, 1, 1, max, 2);
        assertEquals(1 << 30, wideS2.outW());
        assertEquals(1, wideS2.outH());
        assertEquals(1 << 30, p(DType.F32, Layout.NHWC, 1, 1, max, 1, 2).outH());
        for (Problem pr : new Problem[] {wideS2, p(DType.F32, Layout.NHWC, 1, 1, 1, max, 2), p(DType.F16, Layout.NHWC, 1, max, 1, 1, 2),
                p(DType.F32, Layout.NHWC, 1, max, 1, 1, 1), p(DType.F16, Layout.NHWC, 1, max, 1, 1, 1), p(DType.BF16, Layout.NHWC, 1, max, 1, 1, 1)}) {
            String why = DepthwiseConv3x3Heuristics.customUnsupported(pr, h100);
            if (why == null) {  // custom: a grid the launch takes
                Decision d = DepthwiseConv3x3Heuristics.decide(pr, h100);
                assertEquals(Backend.CUSTOM, d.backend(), pr.toString());
                if (pr.layout() == Layout.NHWC && !DepthwiseConv3x3Heuristics.useRing(pr)) {
                    DepthwiseConv3x3Heuristics.Grid g = DepthwiseConv3x3Heuristics.nhwcGrid(pr, h100.smCount());
                    assertTrue(g.blocks() > 0 && g.threads() > 0, pr + ": " + g);
                }
                if (DepthwiseConv3x3Heuristics.useRing(pr)) {
                    DepthwiseConv3x3Heuristics.RingGrid g = DepthwiseConv3x3Heuristics.ringGrid(pr, h100);
                    assertTrue(g.blocks() > 0, pr + ": " + g);
                }
            }
        }
    }

    @Test void beyond32BitThreadIndexingGoesToTheVendor() {
        Problem huge = p(DType.F32, Layout.NCHW, 65536, 1024, 64, 64, 1);
        assertNotNull(DepthwiseConv3x3Heuristics.customUnsupported(huge, DeviceInfo.h100ForTests()));
        assertEquals(Backend.VENDOR, DepthwiseConv3x3Heuristics.decide(huge, DeviceInfo.h100ForTests()).backend());
        assertNull(DepthwiseConv3x3Heuristics.customUnsupported(p(DType.F16, Layout.NHWC, 1, 65536 * 256, 1, 1, 1), DeviceInfo.h100ForTests()));
    }

    @Test void vendorVariantNamesTheComposition() {
        assertEquals("cudnn_grouped_conv+residual+gelu_pass",
                DepthwiseConv3x3Heuristics.vendorVariant(new Problem(DType.BF16, Layout.NCHW, 1, 4, 4, 4, 1, Activation.GELU_ERF, false, true)));
        assertEquals("cudnn_grouped_conv+clipped_relu(6)",
                DepthwiseConv3x3Heuristics.vendorVariant(new Problem(DType.BF16, Layout.NCHW, 1, 4, 4, 4, 1, Activation.RELU6, false, false)));
    }

    /**
     * The variant for real pointers names what launchCustom runs: at aligned addresses it is the shape's variant; a
     * pointer off the access width narrows NCHW's width (and rules out the plane kernel) and turns NHWC's accesses scalar.
     */
    @Test void theVariantForPointersNamesWhatTheLaunchRuns() {
        int[][] shapes = {{1, 8, 28, 28}, {1, 384, 64, 64}, {8, 96, 112, 112}, {2, 64, 7, 7}, {1, 13, 9, 11}, {4, 256, 56, 56}};
        for (DType dt : new DType[] {DType.F16, DType.BF16, DType.F32}) {
            for (Layout l : Layout.values()) {
                for (int[] sh : shapes) {
                    for (int st : new int[] {1, 2}) {
                        Problem pr = p(dt, l, sh[0], sh[1], sh[2], sh[3], st);
                        assertEquals(DepthwiseConv3x3Heuristics.customVariant(pr), DepthwiseConv3x3Heuristics.customVariant(pr, 0, 0, 0), pr.toString());
                        assertEquals(DepthwiseConv3x3Heuristics.customVariant(pr),
                                DepthwiseConv3x3Heuristics.customVariant(pr, 1L << 20, 1L << 21, 1L << 22), pr.toString());
                    }
                }
            }
        }
        // the review's example: F16 NCHW [1, 8, 28, 28] with x one element into its allocation
        Problem nchw = p(DType.F16, Layout.NCHW, 1, 8, 28, 28, 1);
        assertTrue(DepthwiseConv3x3Heuristics.customVariant(nchw).startsWith("nchw_plane_"), DepthwiseConv3x3Heuristics.customVariant(nchw));
        assertEquals("nchw_v1_s1", DepthwiseConv3x3Heuristics.customVariant(nchw, 2, 0, 0));
        Problem nhwc = p(DType.F16, Layout.NHWC, 1, 64, 7, 7, 1);
        assertEquals("nhwc_ring4_c2w4_scalar_s1", DepthwiseConv3x3Heuristics.customVariant(nhwc, 16, 2, 0));   // out off 4 bytes
        assertEquals("nhwc_ring4_c2w4_scalar_s1", DepthwiseConv3x3Heuristics.customVariant(nhwc, 4, 0, 0));   // x off 16 bytes
        Problem plain = p(DType.F16, Layout.NHWC, 1, 14, 7, 7, 2);
        String v = DepthwiseConv3x3Heuristics.customVariant(plain);
        assertTrue(v.startsWith("nhwc_c") && v.contains("_vec"), v);
        assertEquals(v.replace("_vec", "_scalar"), DepthwiseConv3x3Heuristics.customVariant(plain, 0, 0, 1));  // residual off its width
    }

    private static Problem q(DType dt, Layout l, int n, int c, int h, int w, int s, Activation act) {
        return new Problem(dt, l, n, c, h, w, s, act, true, false);
    }

    private static void withPlaneMode(String mode, Runnable r) {
        SystemProperty.with(DepthwiseConv3x3Heuristics.PLANE_PROPERTY, mode, r);
    }

    @Test void planeKernelWhereTheH100AbMeasuredItAhead() {
        // F16/BF16 stride 1 below 48 x 48 with every activation; F32 stride 1 with NONE/RELU/RELU6 at any size it takes
        for (Activation act : Activation.values()) {
            assertTrue(DepthwiseConv3x3Heuristics.usePlane(q(DType.F16, Layout.NCHW, 64, 1024, 14, 14, 1, act)));
            assertTrue(DepthwiseConv3x3Heuristics.usePlane(q(DType.BF16, Layout.NCHW, 32, 512, 28, 28, 1, act)));
            // 48 x 48 to 56 x 56: exact activations on nchw.cu's unrolled loop, SiLU/GELU on the plane kernel up to 64 x 64
            assertEquals(!act.isExact(), DepthwiseConv3x3Heuristics.usePlane(q(DType.F16, Layout.NCHW, 32, 256, 56, 56, 1, act)));
            assertEquals(!act.isExact(), DepthwiseConv3x3Heuristics.usePlane(q(DType.BF16, Layout.NCHW, 1, 1024, 48, 48, 1, act)));
            assertTrue(DepthwiseConv3x3Heuristics.usePlane(q(DType.F16, Layout.NCHW, 32, 784, 40, 40, 1, act)), "below 48 x 48: plane");
            assertEquals(!act.isExact(), DepthwiseConv3x3Heuristics.usePlane(q(DType.F16, Layout.NCHW, 1, 384, 64, 64, 1, act)));
            assertFalse(DepthwiseConv3x3Heuristics.usePlane(q(DType.BF16, Layout.NCHW, 1, 248, 80, 72, 1, act)), "above 64 x 64 half: nchw.cu");
            assertEquals(act.isExact(), DepthwiseConv3x3Heuristics.usePlane(q(DType.F32, Layout.NCHW, 32, 256, 56, 56, 1, act)));
            assertFalse(DepthwiseConv3x3Heuristics.usePlane(q(DType.F16, Layout.NCHW, 64, 1024, 14, 14, 2, act)), "stride 2: nchw.cu");
            assertFalse(DepthwiseConv3x3Heuristics.usePlane(q(DType.F16, Layout.NHWC, 64, 1024, 14, 14, 1, act)));
        }
        assertFalse(DepthwiseConv3x3Heuristics.usePlane(q(DType.F16, Layout.NCHW, 1, 8, 57, 56, 1, Activation.NONE)), "H*W > 3136");
        assertTrue(DepthwiseConv3x3Heuristics.usePlane(q(DType.F16, Layout.NCHW, 1, 8, 64, 64, 1, Activation.SILU)), "H*W = 4096 smooth");
        assertFalse(DepthwiseConv3x3Heuristics.usePlane(q(DType.F16, Layout.NCHW, 1, 8, 65, 64, 1, Activation.GELU_ERF)), "H*W > 4096 smooth");
        assertTrue(DepthwiseConv3x3Heuristics.usePlane(q(DType.F16, Layout.NCHW, 1, 8, 47, 48, 1, Activation.RELU)), "H*W < 2304: plane");
        assertFalse(DepthwiseConv3x3Heuristics.usePlane(q(DType.F16, Layout.NCHW, 1, 8, 48, 48, 1, Activation.RELU6)), "H*W = 2304: unrolled loop");
        // where the unrolled loop does not run (access width below 8, or switched off), exact activations keep the plane kernel up to 56 x 56
        assertTrue(DepthwiseConv3x3Heuristics.usePlane(q(DType.F16, Layout.NCHW, 32, 256, 52, 52, 1, Activation.NONE)), "W = 52: access width 4");
        Problem relu56 = q(DType.BF16, Layout.NCHW, 32, 256, 56, 56, 1, Activation.RELU);
        assertFalse(DepthwiseConv3x3Heuristics.usePlane(relu56, 8));
        assertTrue(DepthwiseConv3x3Heuristics.usePlane(relu56, 4), "a pointer aligned to 8 bytes only: the rolled loop at width 4 would run");
        SystemProperty.with(DepthwiseConv3x3Heuristics.NCHW_UNROLL3_PROPERTY, "false", () ->
                assertTrue(DepthwiseConv3x3Heuristics.usePlane(q(DType.F16, Layout.NCHW, 32, 256, 56, 56, 1, Activation.NONE))));
        assertEquals("nchw_v8u3_s1", DepthwiseConv3x3Heuristics.customVariant(q(DType.F16, Layout.NCHW, 32, 256, 56, 56, 1, Activation.RELU)));
        assertEquals("nchw_plane_g8_s1", DepthwiseConv3x3Heuristics.customVariant(q(DType.BF16, Layout.NCHW, 1, 384, 64, 64, 1, Activation.GELU_ERF)));
        assertEquals("nchw_plane_g4_s1", DepthwiseConv3x3Heuristics.customVariant(q(DType.F32, Layout.NCHW, 32, 256, 56, 56, 1, Activation.RELU)));
        assertEquals("nchw_v4_s1", DepthwiseConv3x3Heuristics.customVariant(q(DType.F32, Layout.NCHW, 32, 256, 56, 56, 1, Activation.SILU)));
        withPlaneMode("false", () -> {
            assertFalse(DepthwiseConv3x3Heuristics.usePlane(q(DType.F16, Layout.NCHW, 64, 1024, 14, 14, 1, Activation.NONE)));
            assertEquals("nchw_v2_s1", DepthwiseConv3x3Heuristics.customVariant(q(DType.F16, Layout.NCHW, 64, 1024, 14, 14, 1, Activation.NONE)));
        });
        withPlaneMode("force", () -> {
            assertTrue(DepthwiseConv3x3Heuristics.usePlane(q(DType.F32, Layout.NCHW, 8, 96, 56, 56, 1, Activation.GELU_ERF)));
            assertEquals("nchw_plane_g4_s1", DepthwiseConv3x3Heuristics.customVariant(q(DType.F32, Layout.NCHW, 8, 96, 56, 56, 1, Activation.GELU_ERF)));
            assertEquals("nchw_plane_g8_s1", DepthwiseConv3x3Heuristics.customVariant(q(DType.F16, Layout.NCHW, 8, 96, 112, 112, 1, Activation.NONE)));
            // no stride-2 plane kernel, and NHWC has its own kernels
            assertFalse(DepthwiseConv3x3Heuristics.usePlane(q(DType.F32, Layout.NCHW, 8, 96, 56, 56, 2, Activation.GELU_ERF)));
            assertFalse(DepthwiseConv3x3Heuristics.usePlane(q(DType.F32, Layout.NHWC, 8, 96, 56, 56, 1, Activation.GELU_ERF)));
        });
    }

    @Test void planeGeometryOfTheMeasuredShapes() {
        // 64x1024x14x14 F16: 2 segments of 7 columns x 2 strips of 7 rows per plane, 32 planes (12.5 KiB) per chunk, 128 threads
        Problem f16 = q(DType.F16, Layout.NCHW, 64, 1024, 14, 14, 1, Activation.NONE);
        DepthwiseConv3x3Heuristics.PlaneGrid g = DepthwiseConv3x3Heuristics.planeGrid(f16, true, true);
        assertEquals(new DepthwiseConv3x3Heuristics.PlaneGrid(7, 1, 7, 32, 128, 3 * 32 * 392, 2048, true, 14), g);
        assertEquals("dwconv3x3_nchw_plane_f16_s1_g7_l1", g.symbol(f16));
        assertEquals(2, g.storeBytes(DType.F16));
        // 32x512x28x28 BF16: 4 x 4 items per plane, 8 planes per chunk
        assertEquals(new DepthwiseConv3x3Heuristics.PlaneGrid(7, 1, 7, 8, 128, 3 * 8 * 1568, 2048, true, 28),
                DepthwiseConv3x3Heuristics.planeGrid(q(DType.BF16, Layout.NCHW, 32, 512, 28, 28, 1, Activation.SILU), true, true));
        // 32x256x56x56 F32: 4 columns (16-byte loads and stores: not staged) x 7 strips of 8 rows = 98 items, one plane per chunk
        g = DepthwiseConv3x3Heuristics.planeGrid(q(DType.F32, Layout.NCHW, 32, 256, 56, 56, 1, Activation.NONE), true, true);
        assertEquals(new DepthwiseConv3x3Heuristics.PlaneGrid(4, 4, 8, 1, 128, 2 * 12544, 8192, false, 56), g);
        assertEquals(16, g.storeBytes(DType.F32));
        // 32x256x56x56 F16: 8 columns (16 bytes) x 7 strips = 49 items; 2 planes would fill 98 of 128 threads, so the
        // 256 target: 5 planes, 245 threads
        assertEquals(new DepthwiseConv3x3Heuristics.PlaneGrid(8, 8, 8, 5, 256, 2 * 5 * 6272, 1639, false, 56),
                DepthwiseConv3x3Heuristics.planeGrid(q(DType.F16, Layout.NCHW, 32, 256, 56, 56, 1, Activation.RELU), true, true));
        // an output view that is not 16-byte aligned: direct stores, no output buffer
        g = DepthwiseConv3x3Heuristics.planeGrid(q(DType.F16, Layout.NCHW, 64, 1024, 14, 14, 1, Activation.NONE), true, false);
        assertEquals(new DepthwiseConv3x3Heuristics.PlaneGrid(7, 1, 7, 32, 128, 2 * 32 * 392, 2048, false, 14), g);
    }

    @Test void planeNotForUnalignedInputStrideTwoOrLargePlanes() {
        assertNull(DepthwiseConv3x3Heuristics.planeGrid(q(DType.F16, Layout.NCHW, 1, 8, 14, 14, 1, Activation.NONE), false, true));
        assertNull(DepthwiseConv3x3Heuristics.planeGrid(q(DType.F16, Layout.NCHW, 1, 8, 14, 14, 2, Activation.NONE), true, true));
        assertNotNull(DepthwiseConv3x3Heuristics.planeGrid(q(DType.F16, Layout.NCHW, 1, 8, 15, 13, 1, Activation.NONE), true, true));
        // planes of which two do not fit 80 KiB go in bands, which need rows of a multiple of 16 bytes: 110 x 110 F32 (440
        // bytes a row) and 200 x 202 F16 (404) keep nchw.cu
        assertNull(DepthwiseConv3x3Heuristics.planeGrid(q(DType.F32, Layout.NCHW, 8, 96, 110, 110, 1, Activation.NONE), true, true));
        assertNull(DepthwiseConv3x3Heuristics.planeGrid(q(DType.F16, Layout.NCHW, 1, 8, 200, 202, 1, Activation.NONE), true, true));
        assertNull(DepthwiseConv3x3Heuristics.planeGrid(q(DType.F16, Layout.NCHW, 1, 1, 1, 40000, 1, Activation.NONE), true, true));
    }

    @Test void planeBandsWherePlanesDoNotFit() {
        // 8x96x112x112 F32 (49 KiB a plane): 28 segments of 4 columns, 9 strips would fill 252 threads, so bands of up to
        // 72 rows, balanced: 2 bands of 56 rows, 8 strips of 7 rows (224 threads), 2 x 58 rows of 448 bytes
        Problem f32 = q(DType.F32, Layout.NCHW, 8, 96, 112, 112, 1, Activation.NONE);
        DepthwiseConv3x3Heuristics.PlaneGrid g = DepthwiseConv3x3Heuristics.planeGrid(f32, true, true);
        assertEquals(new DepthwiseConv3x3Heuristics.PlaneGrid(4, 4, 7, 1, 224, 2 * 58 * 448, 8 * 96 * 2, false, 56), g);
        assertTrue(g.banded(f32));
        assertEquals("nchw_plane_g4_b56_s1", DepthwiseConv3x3Heuristics.customVariant(f32));
        assertEquals("dwconv3x3_nchw_plane_f32_s1_g4_l4_band", g.symbol(f32));
        // 16x64x224x224 F32: 56 segments, 4 strips of 8 rows: bands of 32 rows (7 a plane), 2 x 34 rows of 896 bytes
        Problem big = q(DType.F32, Layout.NCHW, 16, 64, 224, 224, 1, Activation.RELU);
        assertEquals(new DepthwiseConv3x3Heuristics.PlaneGrid(4, 4, 8, 1, 224, 2 * 34 * 896, 16 * 64 * 7, false, 32),
                DepthwiseConv3x3Heuristics.planeGrid(big, true, true));
        assertEquals("nchw_plane_g4_b32_s1", DepthwiseConv3x3Heuristics.customVariant(big));
        // F32 SiLU/GELU keep nchw.cu (the rule), F16/BF16 above 56 x 56 too; forced, F16 16x64x224x224 takes bands as
        // F32 112 x 112 does: 28 segments of 8 columns, 9 strips at most, 4 bands of 56 rows in 8 strips of 7
        assertEquals("nchw_v4_s1", DepthwiseConv3x3Heuristics.customVariant(q(DType.F32, Layout.NCHW, 8, 96, 112, 112, 1, Activation.GELU_ERF)));
        // F32 SiLU on bands only (measured 0.86-0.93x nchw.cu's time there; whole planes keep nchw.cu)
        assertEquals("nchw_plane_g4_b56_s1", DepthwiseConv3x3Heuristics.customVariant(q(DType.F32, Layout.NCHW, 8, 96, 112, 112, 1, Activation.SILU)));
        assertEquals("nchw_v4_s1", DepthwiseConv3x3Heuristics.customVariant(q(DType.F32, Layout.NCHW, 32, 256, 56, 56, 1, Activation.SILU)));
        Problem f16 = q(DType.F16, Layout.NCHW, 16, 64, 224, 224, 1, Activation.NONE);
        assertEquals("nchw_v8u3_s1", DepthwiseConv3x3Heuristics.customVariant(f16));
        withPlaneMode("force", () -> assertEquals(new DepthwiseConv3x3Heuristics.PlaneGrid(8, 8, 7, 1, 224, 2 * 58 * 448, 16 * 64 * 4, false, 56),
                DepthwiseConv3x3Heuristics.planeGrid(f16, true, true)));
        // staged outputs (7-column segments) count a third buffer of band rows: 3 x 100 x 28 F32, forced to 4 rows (4
        // segments: 4 strips of 1 row, 64 threads)
        Problem small = q(DType.F32, Layout.NCHW, 3, 100, 28, 28, 1, Activation.NONE);
        String old = System.getProperty(DepthwiseConv3x3Heuristics.PLANE_BAND_ROWS_PROPERTY);
        System.setProperty(DepthwiseConv3x3Heuristics.PLANE_BAND_ROWS_PROPERTY, "4");
        try {
            assertEquals(new DepthwiseConv3x3Heuristics.PlaneGrid(7, 1, 1, 1, 64, (2 * 6 + 4) * 112, 300 * 7, true, 4),
                    DepthwiseConv3x3Heuristics.planeGrid(small, true, true));
            // a band as tall as the plane is the whole plane
            System.setProperty(DepthwiseConv3x3Heuristics.PLANE_BAND_ROWS_PROPERTY, "28");
            assertFalse(DepthwiseConv3x3Heuristics.planeGrid(small, true, true).banded(small));
            // a value that is not a positive integer is refused by name, not ignored (whole planes) or clamped to 1 row
            for (String bad : new String[] {"0", "-2", "four", ""}) {
                System.setProperty(DepthwiseConv3x3Heuristics.PLANE_BAND_ROWS_PROPERTY, bad);
                dev.gapfill.core.ArgumentException e = assertThrows(dev.gapfill.core.ArgumentException.class,
                        () -> DepthwiseConv3x3Heuristics.planeGrid(small, true, true), bad);
                assertTrue(e.getMessage().contains(DepthwiseConv3x3Heuristics.PLANE_BAND_ROWS_PROPERTY), e.getMessage());
            }
        } finally {
            if (old == null) {
                System.clearProperty(DepthwiseConv3x3Heuristics.PLANE_BAND_ROWS_PROPERTY);
            } else {
                System.setProperty(DepthwiseConv3x3Heuristics.PLANE_BAND_ROWS_PROPERTY, old);
            }
        }
    }

    @Test void planeGeometryKeepsItsInvariantsOnEveryShape() {
        // the entry points nchw_plane.cu compiles
        java.util.Set<String> compiled = new java.util.HashSet<>();
        for (String dt : new String[] {"f32", "f16", "bf16"}) {
            for (String sl : new String[] {"g1_l1", "g2_l2", "g4_l4", "g7_l1"}) {
                compiled.add("dwconv3x3_nchw_plane_" + dt + "_s1_" + sl);
            }
        }
        compiled.add("dwconv3x3_nchw_plane_f16_s1_g8_l8");
        compiled.add("dwconv3x3_nchw_plane_bf16_s1_g8_l8");
        for (String whole : java.util.List.copyOf(compiled)) {
            compiled.add(whole + "_band");
        }
        int applicable = 0;
        int bandedShapes = 0;
        int[] sizes = {1, 2, 3, 5, 7, 8, 13, 14, 16, 21, 28, 31, 56, 64, 100, 112, 150, 224};
        for (DType dt : new DType[] {DType.F32, DType.F16, DType.BF16}) {
            for (int s = 1; s <= 2; s++) {
                for (int h : sizes) {
                    for (int w : sizes) {
                        for (int planes : new int[] {1, 3, 17, 1000}) {
                            for (boolean yAligned : new boolean[] {true, false}) {
                                Problem pr = q(dt, Layout.NCHW, 1, planes, h, w, s, Activation.RELU);
                                DepthwiseConv3x3Heuristics.PlaneGrid g = DepthwiseConv3x3Heuristics.planeGrid(pr, true, yAligned);
                                if (s == 2) {
                                    assertNull(g, pr.toString());
                                }
                                if (g == null) {
                                    continue;
                                }
                                applicable++;
                                String m = pr + " -> " + g;
                                int es = dt.bytes();
                                int ho = pr.outH();
                                int wo = pr.outW();
                                assertTrue(compiled.contains(g.symbol(pr)), m);
                                assertEquals(0, wo % g.seg(), m);
                                assertEquals(yAligned && g.storeBytes(dt) < 16, g.stage(), m);
                                boolean banded = g.banded(pr);
                                bandedShapes += banded ? 1 : 0;
                                int rows = banded ? g.bandRows() : ho;  // output rows of a plane one chunk covers
                                assertEquals(banded, 2L * h * w * es > 80 * 1024, m);
                                assertTrue(g.bandRows() >= 1 && g.bandRows() <= ho, m);
                                int perPlane = (wo / g.seg()) * ((rows + g.rowsPerStrip() - 1) / g.rowsPerStrip());
                                // the items (strip, segment) tile the chunk's rows: every output row and column once
                                int strips = (rows + g.rowsPerStrip() - 1) / g.rowsPerStrip();
                                assertTrue(strips * g.rowsPerStrip() >= rows && (strips - 1) * g.rowsPerStrip() < rows, m);
                                assertEquals(wo, (wo / g.seg()) * g.seg(), m);
                                assertEquals(0, g.seg() % g.lv(), m);
                                assertTrue(g.lv() * es <= 16 && g.storeBytes(dt) <= 16, m);
                                assertTrue(g.planesPerChunk() * perPlane <= g.threads() && g.threads() <= 256 && g.threads() % 32 == 0, m);
                                long smem;
                                if (banded) {
                                    // one plane a chunk, bands of rows + the rows above and below, every band 16-byte aligned
                                    assertEquals(1, g.planesPerChunk(), m);
                                    assertEquals(0, (long) w * es % 16, m);
                                    int bands = (ho + g.bandRows() - 1) / g.bandRows();
                                    assertEquals((long) planes * bands, g.chunks(), m);
                                    assertTrue((long) (bands - 1) * g.bandRows() < ho, m);
                                    smem = ((g.stage() ? 1L : 0L) * g.bandRows() + 2L * (g.bandRows() + 2)) * w * es;
                                } else {
                                    assertEquals(0, (long) g.planesPerChunk() * h * w * es % 16, m);
                                    smem = (g.stage() ? 3L : 2L) * g.planesPerChunk() * h * w * es;
                                    assertTrue((long) g.chunks() * g.planesPerChunk() >= planes && (long) (g.chunks() - 1) * g.planesPerChunk() < planes, m);
                                }
                                assertEquals(smem, g.smemBytes(), m);
                                assertTrue(smem <= 80 * 1024, m);
                                assertTrue(g.rowsPerStrip() >= 1 && g.rowsPerStrip() <= Math.max(8, rows), m);
                            }
                        }
                    }
                }
            }
        }
        assertTrue(applicable > 1000, "the grid exercises the geometry: " + applicable);
        assertTrue(bandedShapes > 100, "the grid exercises the band geometry: " + bandedShapes);
    }
    @Test void tallInputsGetPositiveGridsWhoseStripsCoverEveryRow() {
        // H' near 2^31: the strip arithmetic (h + r - 1) / r overflowed int (NCHW rows per strip -7, NHWC ring 0 strips)
        DeviceInfo info = DeviceInfo.h100ForTests();
        Problem nchw = p(DType.F16, Layout.NCHW, 1, 1, Integer.MAX_VALUE, 1, 1);
        DepthwiseConv3x3Heuristics.Grid g = DepthwiseConv3x3Heuristics.nchwGrid(nchw, 1, info.smCount());
        assertTrue(g.rowsPerStrip() > 0 && g.blocks() > 0 && g.blocks() <= Integer.MAX_VALUE, g.toString());
        assertTrue((long) g.rowsPerStrip() * ((nchw.outH() + (long) g.rowsPerStrip() - 1) / g.rowsPerStrip()) >= nchw.outH(), g.toString());
        Problem nhwc = p(DType.F16, Layout.NHWC, 1, 1, (1 << 30) + 1, 1, 1);
        DepthwiseConv3x3Heuristics.RingGrid r = DepthwiseConv3x3Heuristics.ringGrid(nhwc, info);
        assertTrue(r.strips() > 0 && r.rowsPerStrip() > 0 && (long) r.strips() * r.rowsPerStrip() >= nhwc.outH(), r.toString());
        DepthwiseConv3x3Heuristics.Grid h = DepthwiseConv3x3Heuristics.nhwcGrid(nhwc, info.smCount());
        assertTrue(h.rowsPerStrip() > 0 && h.blocks() > 0, h.toString());
        assertTrue(DepthwiseConv3x3Heuristics.rowsPerStrip(Integer.MAX_VALUE, 8, 1, 132) >= 2);
    }
}
