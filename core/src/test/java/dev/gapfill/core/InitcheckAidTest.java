package dev.gapfill.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

class InitcheckAidTest {
    @Test void offUnlessTheJvmAsksForIt() {
        // The build never sets -Dgapfill.debug.initcheck: the vendor paths must not pay a memset per call.
        assertFalse(InitcheckAid.enabled());
    }

    @Test void leavesDataAloneWhenOff() {
        try (Tensor t = Tensor.of(Device.CPU, DType.F32, new float[] {1, 2, 3}, 3)) {
            InitcheckAid.beforeVendorWrite(t, null);
            assertArrayEquals(new float[] {1, 2, 3}, t.toFloatArray());
        }
    }
}
