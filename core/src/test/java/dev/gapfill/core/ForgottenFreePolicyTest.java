package dev.gapfill.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ForgottenFreePolicyTest {
    @Test void legacyByDefaultDeferredOnRequestAnythingElseNamesTheProperty() {
        String saved = System.getProperty(CudaDevice.FORGOTTEN_FREE);
        try {
            System.clearProperty(CudaDevice.FORGOTTEN_FREE);
            assertFalse(CudaDevice.deferForgotten());
            System.setProperty(CudaDevice.FORGOTTEN_FREE, "legacy");
            assertFalse(CudaDevice.deferForgotten());
            System.setProperty(CudaDevice.FORGOTTEN_FREE, " deferred ");
            assertTrue(CudaDevice.deferForgotten());
            System.setProperty(CudaDevice.FORGOTTEN_FREE, "later");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, CudaDevice::deferForgotten);
            assertTrue(e.getMessage().startsWith(CudaDevice.FORGOTTEN_FREE + ": expected legacy or deferred"), e.getMessage());
        } finally {
            if (saved == null) {
                System.clearProperty(CudaDevice.FORGOTTEN_FREE);
            } else {
                System.setProperty(CudaDevice.FORGOTTEN_FREE, saved);
            }
        }
    }
}
