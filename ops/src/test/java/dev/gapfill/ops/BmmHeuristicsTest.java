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
        assertEquals(Backend.CUSTOM, auto(DType.F16, 512, 64, 64, 64));
        assertEquals(Backend.CUSTOM, auto(DType.F32, 8192, 48, 48, 48));
        assertEquals(Backend.CUSTOM, auto(DType.F32, 2048, 17, 33, 9));
    }

    @Test void measuredLossesGoVendor() {
        assertEquals(Backend.VENDOR, auto(DType.F16, 2048, 48, 48, 48));
        assertEquals(Backend.VENDOR, auto(DType.F16, 2048, 64, 64, 64));
        assertEquals(Backend.VENDOR, auto(DType.BF16, 8192, 128, 128, 128));
        assertEquals(Backend.VENDOR, auto(DType.F16, 2048, 1, 64, 64));
        assertEquals(Backend.VENDOR, auto(DType.F16, 2048, 64, 1, 64));
        assertEquals(Backend.VENDOR, auto(DType.F16, 2048, 32, 128, 64));
        assertEquals(Backend.VENDOR, auto(DType.F32, 2048, 64, 64, 64));
        assertEquals(Backend.VENDOR, auto(DType.F32, 512, 128, 128, 128));
        BmmShape tt = BmmShape.of(DType.F32, 2048, 32, 32, 32).withTransposes(true, true);
        assertEquals(Backend.VENDOR, BmmHeuristics.decide(tt, H100).backend());
        BmmShape shared = BmmShape.of(DType.F16, 2048, 64, 64, 64).withSharedB(true);
        Decision d = BmmHeuristics.decide(shared, H100);
        assertEquals(Backend.VENDOR, d.backend());
        assertEquals("cublas_gemm_folded", d.variant());
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
}
