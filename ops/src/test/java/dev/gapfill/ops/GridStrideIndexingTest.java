package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.DeviceInfo;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The launch geometry of the 32-bit grid-stride kernels (scale_add, int8_mm dequant, the grouped GEMM vendor passes,
 * the depthwise vendor GELU) and its check against index wrap-around, on the SM count of an H100 (pure: no GPU). A
 * bound within one grid stride of 2^31 passes the element-count checks (at most 2^31-1 elements) but wraps the
 * kernels' {@code int} index; the launchers reject it, naming the argument, before any launch.
 */
class GridStrideIndexingTest {
    private static final int SMS = DeviceInfo.h100ForTests().smCount();
    /** 2^31-2 = 1386 · 1549411: past the wrap on any GPU, yet within the 2^31-1 element limit. */
    private static final long NEAR = Integer.MAX_VALUE - 1L;

    @Test void scaleAdd() {
        for (DType dt : new DType[] {DType.F32, DType.F16, DType.BF16}) {
            int blocks = Elementwise.checkedBlocks(1 << 20, dt, SMS);
            assertTrue(blocks >= 1 && blocks <= SMS * 16);
            assertEquals("a", assertThrows(ArgumentException.class, () -> Elementwise.checkedBlocks(NEAR, dt, SMS)).argument());
            // the largest n that passes: n + blocks·256 = 2^31-1 with the full grid
            long max = Integer.MAX_VALUE - 256L * SMS * 16;
            assertEquals(SMS * 16, Elementwise.checkedBlocks(max, dt, SMS));
            assertThrows(ArgumentException.class, () -> Elementwise.checkedBlocks(max + 1, dt, SMS));
        }
    }

    @Test void gqaDecodeVendorGlue() {
        assertEquals(2, GqaDecodePlan.glueColumns(512));
        assertEquals(512, GqaDecodePlan.glueColumns(131072));
        long max = (Integer.MAX_VALUE - 255L) / 2 / 256 * 256;  // a multiple of 256: maxLen + maxLen <= 2^31-1
        assertDoesNotThrow(() -> GqaDecodePlan.glueColumns((int) max));
        ArgumentException e = assertThrows(ArgumentException.class, () -> GqaDecodePlan.glueColumns(1 << 30));
        assertEquals("maxLen", e.argument());
        assertTrue(e.getMessage().contains("32-bit indexing"), e.getMessage());
    }

    @Test void int8MmDequant() {
        assertEquals(4, Int8Mm.dequantBlocks(1000, SMS));
        ArgumentException e = assertThrows(ArgumentException.class, () -> Int8Mm.dequantBlocks(NEAR, SMS));
        assertEquals("out", e.argument());
        assertTrue(e.getMessage().contains("32-bit indexing"), e.getMessage());
        long max = Integer.MAX_VALUE - 256L * 8 * SMS;
        assertDoesNotThrow(() -> Int8Mm.dequantBlocks(max, SMS));
        assertThrows(ArgumentException.class, () -> Int8Mm.dequantBlocks(max + 1, SMS));
    }

    @Test void groupedGemmVendorPasses() {
        int tTotal = 1549411;
        int k = 1386;  // T_total·K = 2^31-2
        GroupedGemm.Dims d = new GroupedGemm.Dims(1, tTotal, 1, k, 8, 8);
        GroupedGemm.Dims small = new GroupedGemm.Dims(4, 4096, 4096, 4096, 8192, 4096);
        try (Fixture f = new Fixture(dev.gapfill.core.Device.CPU, 1)) {
            GroupedGemm.Options plain = GroupedGemm.Options.builder().backend(Backend.VENDOR).build();
            assertDoesNotThrow(() -> GroupedGemm.checkPassIndexing(plain, d, SMS));  // no gather, no epilogue: no pass runs
            GroupedGemm.Options withGather = GroupedGemm.Options.builder().gather(f.fakes().fake(DType.I32, tTotal)).backend(Backend.VENDOR).build();
            ArgumentException e = assertThrows(ArgumentException.class, () -> GroupedGemm.checkPassIndexing(withGather, d, SMS));
            assertEquals("gather", e.argument());
            assertTrue(e.getMessage().contains("32-bit indexing"), e.getMessage());
            assertDoesNotThrow(() -> GroupedGemm.checkPassIndexing(withGather, small, SMS));
            GroupedGemm.Options swiglu = GroupedGemm.Options.builder().swiglu(true).backend(Backend.VENDOR).build();
            GroupedGemm.Dims wide = new GroupedGemm.Dims(1, 1386, 1386, 8, 2 * tTotal, tTotal);  // out: T_total·N/2 = 2^31-2
            assertEquals("out", assertThrows(ArgumentException.class, () -> GroupedGemm.checkPassIndexing(swiglu, wide, SMS)).argument());
            GroupedGemm.Options scaled = GroupedGemm.Options.builder().rowScale(f.fakes().fake(DType.F32, 1386)).backend(Backend.VENDOR).build();
            GroupedGemm.Dims plainWide = new GroupedGemm.Dims(1, 1386, 1386, 8, tTotal, tTotal);
            assertEquals("out", assertThrows(ArgumentException.class, () -> GroupedGemm.checkPassIndexing(scaled, plainWide, SMS)).argument());
            assertDoesNotThrow(() -> GroupedGemm.checkPassIndexing(swiglu, small, SMS));
        }
        assertEquals(SMS * 4, GroupedGemm.passBlocks(SMS));
    }

    @Test void depthwiseVendorGelu() {
        for (DType dt : new DType[] {DType.F32, DType.F16, DType.BF16}) {
            assertEquals(1, DepthwiseConv3x3Cudnn.geluBlocks(7, dt, SMS));
            assertEquals("x", assertThrows(ArgumentException.class, () -> DepthwiseConv3x3Cudnn.geluBlocks(NEAR, dt, SMS)).argument());
        }
    }
}
