package dev.gapfill.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Discovery never throws, and explains itself when there is no GPU. */
class GpuStatusTest {
    @Test void probeAnswersWithoutThrowing() {
        Gpu.Status s = Gpu.status();
        if (s.available()) {
            assertNull(s.reason());
            assertTrue(s.deviceCount() > 0);
            assertEquals(Device.cuda(0), Device.best());
        } else {
            assertNotNull(s.reason());
            assertEquals(0, Gpu.deviceCount());
            assertEquals(Device.CPU, Device.best());
            GpuUnavailableException e = assertThrows(GpuUnavailableException.class, () -> Gpu.device(0));
            assertTrue(e.getMessage().contains(s.reason()));
        }
    }

    /** A null device is refused naming the argument, before any probe (with or without a GPU), like a CPU one. */
    @Test void aNullOrHostDeviceIsRefusedByName() {
        for (org.junit.jupiter.api.function.Executable call : new org.junit.jupiter.api.function.Executable[] {
                () -> Gpu.device((Device) null), () -> Stream.create(null), () -> Stream.perThread(null),
                () -> Gpu.device(Device.CPU)}) {
            assertEquals("device", assertThrows(ArgumentException.class, call).argument());
        }
    }

    @Test void slugsAreStable() {
        assertEquals("h100", DeviceInfo.h100ForTests().slug());
        assertEquals("a100", DeviceInfo.a100ForTests().slug());
    }
}
