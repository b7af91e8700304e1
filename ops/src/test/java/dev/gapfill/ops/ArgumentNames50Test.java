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

    @Test void int8DecisionsNameTheOutputTheLengthsAndTheDevice() {
        assertEquals("out", argument(() -> Int8MmHeuristics.decide(1, 4096, 4096, null, H100, Backend.AUTO)));  // was an NPE
        assertEquals("out", argument(() -> Int8MmHeuristics.decide(1, 4096, 4096, DType.I8, H100, Backend.AUTO)));
        assertEquals("k", argument(() -> Int8MmHeuristics.skinnyPlan(8, 64, 0, H100)));  // was / by zero
        assertEquals("n", argument(() -> Int8MmHeuristics.skinnyPlan(8, 0, 4096, H100)));
        assertEquals("info", argument(() -> Int8MmHeuristics.skinnyPlan(8, 64, 4096, null)));
    }
}
