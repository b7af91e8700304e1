package dev.gapfill.ops;

import dev.gapfill.core.DeviceInfo;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The occupancy models of devices before sm_90 use the register counts of the sm_80 image they run (ptxas, CUDA 13.0),
 * where those differ from sm_90a's: found by a read-only review, the plans had counted one CTA more per SM than fits.
 */
class PreHopperOccupancyTest {
    private static final DeviceInfo H100 = DeviceInfo.h100ForTests();
    private static final DeviceInfo A100 = DeviceInfo.a100ForTests();
    private static final DeviceInfo RTX3090 = DeviceInfo.rtx3090ForTests();

    @Test void int8SkinnyTilesCountTheSm80ImagesRegisters() {
        // m32: 126 registers in the sm_90a image (4 CTAs of 128 threads per SM by registers), 132 in the sm_80 one (3)
        assertEquals(4, Int8MmHeuristics.ctasPerSm(32, 0, H100));
        assertEquals(3, Int8MmHeuristics.ctasPerSm(32, 0, A100));
        assertEquals(3, Int8MmHeuristics.ctasPerSm(32, 0, RTX3090));
        // m64: 168 (3 CTAs) against 182 (2)
        assertEquals(3, Int8MmHeuristics.ctasPerSm(64, 0, H100));
        assertEquals(2, Int8MmHeuristics.ctasPerSm(64, 0, A100));
        // m8 and m16 are the same in both images
        assertEquals(Int8MmHeuristics.ctasPerSm(8, 0, H100), Int8MmHeuristics.ctasPerSm(8, 0, A100));
        assertEquals(Int8MmHeuristics.ctasPerSm(16, 0, H100), Int8MmHeuristics.ctasPerSm(16, 0, A100));
    }

    @Test void theRingsTwoByTwoGeometryCountsItsSm80Registers() {
        DepthwiseConv3x3Heuristics.RingConfig c = DepthwiseConv3x3Heuristics.RingConfig.C2W2;
        assertEquals(64, c.registers(H100));
        assertEquals(72, c.registers(RTX3090), "ptxas's count of the sm_80 image, not the launch bounds' 85");
        assertEquals(3, Occupancy.blocksPerSm(256, c.registers(RTX3090), 0, RTX3090), "3 blocks of 256 threads fit; 85 had planned 2");
        assertEquals(2, Occupancy.blocksPerSm(256, 85, 0, RTX3090));
    }
}
