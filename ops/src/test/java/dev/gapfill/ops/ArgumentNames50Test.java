package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.DeviceInfo;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The public decision functions, from the fiftieth session's review of the int8Mm and bmm host code: a shape no call can
 * have is refused naming its part (it divided by zero, threw a NullPointerException, or returned a decision).
 */
class ArgumentNames50Test {
    private static final DeviceInfo H100 = DeviceInfo.h100ForTests();

    private static String argument(Runnable call) {
        return assertThrows(ArgumentException.class, call::run).argument();
    }

    @Test void aBmmShapeNamesTheDimensionOrDtype() {
        assertEquals("n", argument(() -> Bmm.decide(BmmShape.of(DType.F16, 8, 8, 0, 8), H100, Backend.AUTO)));  // was / by zero
        assertEquals("batch", argument(() -> BmmShape.of(DType.F16, 0, 8, 8, 8)));
        assertEquals("m", argument(() -> BmmShape.of(DType.BF16, 8, -1, 8, 8)));
        assertEquals("k", argument(() -> BmmShape.of(DType.F32, 8, 8, 8, 0)));
        assertEquals("dtype", argument(() -> BmmShape.of(DType.I8, 8, 8, 8, 8)));  // was a CUSTOM decision
        assertEquals("dtype", argument(() -> BmmShape.of(null, 8, 8, 8, 8)));
        assertEquals("precision", argument(() -> new BmmShape(DType.F32, 1, 1, 1, 1, false, false, false, null)));
    }

    @Test void groupedShapesAndHostOffsetsAreCheckedOnEveryPath() {
        assertEquals("groups", argument(() -> new GroupedGemmHeuristics.Shape(0, 8, 64, 64, false, DType.F16, GroupedGemm.WeightLayout.KN)));
        assertEquals("k", argument(() -> new GroupedGemmHeuristics.Shape(4, 8, 0, 64, false, DType.F16, GroupedGemm.WeightLayout.KN)));
        assertEquals("dtype", argument(() -> new GroupedGemmHeuristics.Shape(4, 8, 64, 64, false, DType.F32, GroupedGemm.WeightLayout.KN)));
        java.util.Random r = new java.util.Random(4);
        try (dev.gapfill.core.Tensor x = dev.gapfill.core.testing.Poison.random(dev.gapfill.core.Device.CPU, DType.F16, r, 7, 16);
             dev.gapfill.core.Tensor w = dev.gapfill.core.testing.Poison.random(dev.gapfill.core.Device.CPU, DType.F16, r, 3, 16, 8);
             dev.gapfill.core.Tensor off = dev.gapfill.core.Tensor.ofInts(dev.gapfill.core.Device.CPU, new int[] {0, 2, 5, 7}, 4)) {
            GroupedGemm.Options o = GroupedGemm.Options.builder().build();
            // not monotonic: refused on the CPU path too (the reference ignored the copy), before anything is allocated
            assertEquals("options.hostOffsets", argument(() -> GroupedGemm.run(x, w, off, o.withHostOffsets(new int[] {0, 5, 3, 7})).close()));
            // valid but not the offsets' values
            assertEquals("options.hostOffsets", argument(() -> GroupedGemm.run(x, w, off, o.withHostOffsets(new int[] {0, 3, 5, 7})).close()));
            GroupedGemm.run(x, w, off, o.withHostOffsets(new int[] {0, 2, 5, 7})).close();  // the same values run
        }
    }

    /** The depthwise vendor plan's key: the largest of 16, 8, 4, 2, 1 that divides every operand's address. */
    @Test void depthwisePlansAreKeptPerCommonAlignment() {
        long base = 0x7f00_0000_1000L;
        assertEquals(16, DepthwiseConv3x3Cudnn.alignmentOf(base, base + 256, base + 4096));
        assertEquals(2, DepthwiseConv3x3Cudnn.alignmentOf(base, base + 2));         // an F16 view one element in
        assertEquals(8, DepthwiseConv3x3Cudnn.alignmentOf(base + 8, base + 24));     // not 16: the plan for 8 bytes
        assertEquals(4, DepthwiseConv3x3Cudnn.alignmentOf(base + 4, base + 8, base));
        assertEquals(1, DepthwiseConv3x3Cudnn.alignmentOf(base + 1));
        assertEquals(16, DepthwiseConv3x3Cudnn.alignmentOf());                       // no operand: aligned
        for (long off = 0; off < 40; off++) {  // against a plain search of the largest divisor
            int expected = 1;
            for (int a = 16; a >= 1; a /= 2) {
                if ((base + off) % a == 0 && base % a == 0) {
                    expected = a;
                    break;
                }
            }
            assertEquals(expected, DepthwiseConv3x3Cudnn.alignmentOf(base, base + off), "offset " + off);
        }
    }

    @Test void int8DecisionsNameTheOutputTheLengthsAndTheDevice() {
        assertEquals("out", argument(() -> Int8MmHeuristics.decide(1, 4096, 4096, null, H100, Backend.AUTO)));  // was an NPE
        assertEquals("out", argument(() -> Int8MmHeuristics.decide(1, 4096, 4096, DType.I8, H100, Backend.AUTO)));
        assertEquals("k", argument(() -> Int8MmHeuristics.skinnyPlan(8, 64, 0, H100)));  // was / by zero
        assertEquals("n", argument(() -> Int8MmHeuristics.skinnyPlan(8, 0, 4096, H100)));
        assertEquals("info", argument(() -> Int8MmHeuristics.skinnyPlan(8, 64, 4096, null)));
    }
}
