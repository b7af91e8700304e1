package dev.gapfill.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link DeviceInfo#asProfile}: a device described as a pre-Hopper part (the system property gapfill.debug.deviceAs) takes
 * that part's compute capability and limits, keeps its own memory and library versions, and names its results apart.
 */
class DeviceProfileTest {
    @Test void aProfileTakesThePartsLimitsAndKeepsTheRest() {
        // a device whose own ordinal, memory and library versions differ from every synthetic profile's, so that a
        // profile copying those fields from the part fails below
        DeviceInfo h = new DeviceInfo(3, "NVIDIA H200", 9, 0, 132, 60L << 20, 227L << 10, 228L << 10, 141L << 30,
                13010, 13020, 130200, 91500);
        DeviceInfo a = h.asProfile("a100");
        assertEquals(3, a.ordinal());
        assertEquals(13010, a.driverVersion());
        assertEquals(13020, a.runtimeVersion());
        assertEquals(91500L, a.cudnnVersion());
        assertEquals(80, a.cc());
        assertEquals(108, a.smCount());
        assertEquals(163L << 10, a.smemPerBlockOptin());
        assertEquals(h.totalMemBytes(), a.totalMemBytes());
        assertEquals(h.cublasVersion(), a.cublasVersion());
        assertEquals(86, h.asProfile("rtx3090").cc());
        assertEquals(99L << 10, h.asProfile("rtx3090").smemPerBlockOptin());
        assertEquals(89, h.asProfile("l4").cc());
    }

    @Test void itsResultsNeverLandInTheRealDevicesFiles() {
        DeviceInfo a = DeviceInfo.h100ForTests().asProfile("a100");
        assertEquals("h100-as-a100", a.slug());
        assertTrue(a.name().startsWith("NVIDIA H100 80GB HBM3 [as a100]"), a.name());
        assertEquals("h100-as-l4", DeviceInfo.h100ForTests().asProfile("l4").slug());
    }

    @Test void thePropertyAppliesAProfileOnlyWhenSetAndOnlyOnce() {
        DeviceInfo h = DeviceInfo.h100ForTests();
        org.junit.jupiter.api.Assertions.assertSame(h, CudaDevice.applyDeviceAs(h, ""));
        org.junit.jupiter.api.Assertions.assertSame(h, CudaDevice.applyDeviceAs(h, null));
        DeviceInfo a = CudaDevice.applyDeviceAs(h, "a100");
        assertEquals(40L << 20, a.l2Bytes());
        assertEquals(164L << 10, a.smemPerSm());
        assertThrows(ArgumentException.class, () -> a.asProfile("l4"));  // never "h100-as-a100] [as l4"
        DeviceInfo h200 = new DeviceInfo(0, "NVIDIA H200", 9, 0, 132, 60L << 20, 227L << 10, 228L << 10, 141L << 30,
                13000, 13000, 130100, 91400);
        assertEquals("h200-as-rtx3090", h200.asProfile("rtx3090").slug());
    }

    @Test void aGh200IsNotAnH200() {
        DeviceInfo gh = new DeviceInfo(0, "NVIDIA GH200 480GB", 9, 0, 132, 60L << 20, 227L << 10, 228L << 10, 96L << 30,
                13000, 13000, 130100, 91400);
        assertEquals("gh200", gh.slug());
    }

    @Test void anUnknownProfileNamesTheProperty() {
        ArgumentException e = assertThrows(ArgumentException.class, () -> DeviceInfo.h100ForTests().asProfile("v100"));
        assertEquals(CudaDevice.DEVICE_AS, e.argument());
        assertThrows(ArgumentException.class, () -> DeviceInfo.h100ForTests().asProfile(null));
    }
}
