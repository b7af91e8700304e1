package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.DeviceInfo;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Bmm's pure decide refuses null arguments by name (not a NullPointerException), and DepthwiseConv3x3.outputShape
 * refuses a shape with a dimension below 1 naming "x" (CPU only).
 */
class OpsReview49DecideAndShapeTest {
    private static final DeviceInfo H100 = DeviceInfo.h100ForTests();
    private static final BmmShape SHAPE = BmmShape.of(DType.F16, 4, 8, 8, 8);

    private static String argument(Runnable call) {
        return assertThrows(ArgumentException.class, call::run).argument();
    }

    @Test void bmmDecideNamesANullShape() {
        for (Backend b : new Backend[] {Backend.AUTO, Backend.VENDOR, Backend.CUSTOM, Backend.REFERENCE, null}) {
            assertEquals("shape", argument(() -> Bmm.decide(null, H100, b)), String.valueOf(b));
            assertEquals("shape", argument(() -> Bmm.decide(null, null, b)), "shape before info, " + b);
        }
    }

    @Test void bmmDecideNamesANullInfo() {
        for (Backend b : new Backend[] {Backend.AUTO, Backend.VENDOR, Backend.CUSTOM, Backend.REFERENCE, null}) {
            assertEquals("info", argument(() -> Bmm.decide(SHAPE, null, b)), String.valueOf(b));
        }
    }

    @Test void bmmDecideRefusesANullOrReferenceBackendAsTheOptionsDo() {
        assertEquals("options.backend", argument(() -> Bmm.decide(SHAPE, H100, null)));
        assertEquals("options.backend", argument(() -> Bmm.decide(SHAPE, H100, Backend.REFERENCE)));
        assertEquals("options.backend", argument(() -> new Bmm.Options(false, false, Bmm.Precision.EXACT, null)));
        assertEquals(Backend.VENDOR, Bmm.decide(SHAPE, H100, Backend.VENDOR).backend());  // the others still decide
        assertEquals(Backend.CUSTOM, Bmm.decide(SHAPE, H100, Backend.CUSTOM).backend());
    }

    @Test void outputShapeRefusesNonPositiveDimensionsNamingX() {
        for (DepthwiseConv3x3.Layout l : DepthwiseConv3x3.Layout.values()) {
            for (int stride = 1; stride <= 2; stride++) {
                DepthwiseConv3x3.Options o = DepthwiseConv3x3.Options.builder().layout(l).stride(stride).build();
                for (int i = 0; i < 4; i++) {
                    for (long bad : new long[] {0, -1, -5, Long.MIN_VALUE}) {
                        long[] shape = {1, 2, 3, 4};
                        shape[i] = bad;
                        ArgumentException e = assertThrows(ArgumentException.class, () -> DepthwiseConv3x3.outputShape(shape, o));
                        assertEquals("x", e.argument(), l + " s" + stride + " dim " + i + " = " + bad);
                    }
                }
            }
        }
        assertEquals("x", argument(() -> DepthwiseConv3x3.outputShape(new long[] {1, 1, -5, 0}, DepthwiseConv3x3.Options.defaults())));
    }

    @Test void outputShapeOfPositiveDimensionsIsCeilAndDoesNotWrap() {
        DepthwiseConv3x3.Options s2 = DepthwiseConv3x3.Options.builder().stride(2).build();
        assertArrayEquals(new long[] {1, 2, 2, 3}, DepthwiseConv3x3.outputShape(new long[] {1, 2, 3, 5}, s2));
        assertArrayEquals(new long[] {1, 2, 1, 1}, DepthwiseConv3x3.outputShape(new long[] {1, 2, 1, 1}, s2));
        assertArrayEquals(new long[] {1, 2, 3, 5}, DepthwiseConv3x3.outputShape(new long[] {1, 2, 3, 5}, DepthwiseConv3x3.Options.defaults()));
        DepthwiseConv3x3.Options nhwc2 = DepthwiseConv3x3.Options.builder().layout(DepthwiseConv3x3.Layout.NHWC).stride(2).build();
        assertArrayEquals(new long[] {1, 2, 3, 7}, DepthwiseConv3x3.outputShape(new long[] {1, 3, 5, 7}, nhwc2));
        long max = Long.MAX_VALUE;  // (d + s - 1) / s wrapped negative here
        assertArrayEquals(new long[] {1, 1, max / 2 + 1, max / 2 + 1}, DepthwiseConv3x3.outputShape(new long[] {1, 1, max, max}, s2));
    }
}
