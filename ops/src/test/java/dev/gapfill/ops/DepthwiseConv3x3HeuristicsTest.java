package dev.gapfill.ops;

import dev.gapfill.core.DType;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.ops.DepthwiseConv3x3.Activation;
import dev.gapfill.ops.DepthwiseConv3x3.Layout;
import dev.gapfill.ops.DepthwiseConv3x3.Problem;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DepthwiseConv3x3HeuristicsTest {
    private static Problem p(DType dt, Layout l, int n, int c, int h, int w, int s) {
        return new Problem(dt, l, n, c, h, w, s, Activation.SILU, true, false);
    }

    @Test void customForTheSweepShapesExceptTheMeasuredF16NhwcBand() {
        int[][] shapes = {{1, 384, 64, 64}, {8, 96, 112, 112}, {32, 256, 56, 56}, {32, 512, 28, 28}, {64, 1024, 14, 14}, {16, 64, 224, 224}};
        for (DeviceInfo info : new DeviceInfo[] {DeviceInfo.h100ForTests(), DeviceInfo.a100ForTests()}) {
            for (int[] s : shapes) {
                for (Layout l : Layout.values()) {
                    for (DType dt : new DType[] {DType.F16, DType.BF16, DType.F32}) {
                        for (int stride = 1; stride <= 2; stride++) {
                            for (Activation act : Activation.values()) {
                                Problem pr = new Problem(dt, l, s[0], s[1], s[2], s[3], stride, act, true, false);
                                Decision d = DepthwiseConv3x3Heuristics.decide(pr, info);
                                // H100 harness: cuDNN won only f16 NHWC stride-1 SiLU/GELU at 8x96x112x112, 32x512x28x28, 64x1024x14x14
                                boolean band = dt == DType.F16 && l == Layout.NHWC && stride == 1 && !act.isExact()
                                        && (s[1] == 96 || s[1] == 512 || s[1] == 1024);
                                assertEquals(band ? Backend.VENDOR : Backend.CUSTOM, d.backend(), pr + " -> " + d);
                                assertTrue(d.reason().contains("H100"), "the rule cites its measurement: " + d.reason());
                            }
                        }
                    }
                }
            }
        }
    }

    @Test void bandEdgesAreInclusiveAndNamed() {
        Problem lo = new Problem(DType.F16, Layout.NHWC, 1, 64, 256, 256, 1, Activation.SILU, false, false); // 4,194,304 = 4M
        assertEquals(Backend.VENDOR, DepthwiseConv3x3Heuristics.decide(lo, DeviceInfo.h100ForTests()).backend());
        Problem below = new Problem(DType.F16, Layout.NHWC, 1, 64, 256, 255, 1, Activation.SILU, false, false);
        assertEquals(Backend.CUSTOM, DepthwiseConv3x3Heuristics.decide(below, DeviceInfo.h100ForTests()).backend());
        Problem relu = new Problem(DType.F16, Layout.NHWC, 1, 64, 256, 256, 1, Activation.RELU, false, false);
        assertEquals(Backend.CUSTOM, DepthwiseConv3x3Heuristics.decide(relu, DeviceInfo.h100ForTests()).backend());
    }

    @Test void vendorBeforeAmpere() {
        DeviceInfo t4 = new DeviceInfo(0, "Tesla T4", 7, 5, 40, 4L << 20, 64L << 10, 64L << 10, 16L << 30, 13000, 13000, 130100, 91400);
        Decision d = DepthwiseConv3x3Heuristics.decide(p(DType.F16, Layout.NHWC, 1, 64, 8, 8, 1), t4);
        assertEquals(Backend.VENDOR, d.backend());
        assertEquals("cudnn_grouped_conv+bias+swish", d.variant());
        assertNotNull(DepthwiseConv3x3Heuristics.customUnsupported(p(DType.F16, Layout.NHWC, 1, 64, 8, 8, 1), t4));
    }

    @Test void variantsNameLayoutVectorWidthAndStride() {
        assertEquals("nhwc_vec16_s1", DepthwiseConv3x3Heuristics.customVariant(p(DType.F16, Layout.NHWC, 1, 64, 7, 7, 1)));
        assertEquals("nhwc_scalar_s2", DepthwiseConv3x3Heuristics.customVariant(p(DType.F16, Layout.NHWC, 1, 13, 7, 7, 2)));
        assertEquals("nhwc_vec16_s1", DepthwiseConv3x3Heuristics.customVariant(p(DType.F32, Layout.NHWC, 1, 4, 7, 7, 1)));
        // NCHW vectors run along W: W = 56 is 7 vectors of 8 halves; W' = 28 at stride 2 is not a multiple of 8
        assertEquals("nchw_vec16_s1", DepthwiseConv3x3Heuristics.customVariant(p(DType.F16, Layout.NCHW, 1, 8, 56, 56, 1)));
        assertEquals("nchw_scalar_s2", DepthwiseConv3x3Heuristics.customVariant(p(DType.F16, Layout.NCHW, 1, 8, 56, 56, 2)));
        assertEquals("nchw_vec16_s2", DepthwiseConv3x3Heuristics.customVariant(p(DType.F32, Layout.NCHW, 1, 8, 56, 56, 2)));
        assertEquals("nchw_scalar_s1", DepthwiseConv3x3Heuristics.customVariant(p(DType.BF16, Layout.NCHW, 1, 8, 14, 14, 1)));
    }

    @Test void gridLimitsSendHugeChannelCountsToTheVendor() {
        // NHWC grid.y = ceil(C / (32 lanes · 8 halves)) must stay ≤ 65535
        Problem huge = p(DType.F16, Layout.NHWC, 1, 65536 * 256, 1, 1, 1);
        assertNotNull(DepthwiseConv3x3Heuristics.customUnsupported(huge, DeviceInfo.h100ForTests()));
        assertEquals(Backend.VENDOR, DepthwiseConv3x3Heuristics.decide(huge, DeviceInfo.h100ForTests()).backend());
        assertNull(DepthwiseConv3x3Heuristics.customUnsupported(p(DType.F16, Layout.NHWC, 1, 65535 * 256, 1, 1, 1), DeviceInfo.h100ForTests()));
    }

    @Test void vendorVariantNamesTheComposition() {
        assertEquals("cudnn_grouped_conv+residual+gelu_pass",
                DepthwiseConv3x3Heuristics.vendorVariant(new Problem(DType.BF16, Layout.NCHW, 1, 4, 4, 4, 1, Activation.GELU_ERF, false, true)));
        assertEquals("cudnn_grouped_conv+clipped_relu(6)",
                DepthwiseConv3x3Heuristics.vendorVariant(new Problem(DType.BF16, Layout.NCHW, 1, 4, 4, 4, 1, Activation.RELU6, false, false)));
    }
}
