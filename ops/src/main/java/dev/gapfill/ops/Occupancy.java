package dev.gapfill.ops;

import dev.gapfill.core.DeviceInfo;

/**
 * Resident thread blocks per SM, estimated from above the way the CUDA occupancy calculator counts, for the launch
 * plans that size their grids or splits by it (depthwise ring, int8 skinny split-K, grouped GEMM persistent grid).
 * Pure functions of the kernel's facts and {@link DeviceInfo}, so the plans stay unit-testable on the CPU.
 */
final class Occupancy {
    private Occupancy() {}

    /**
     * Blocks per SM at most, whatever the resources: the least of sm_80 to sm_90's limits (16 on sm_86/87, 24 on sm_89, 32
     * on sm_80 and sm_90), so a model that counts more small blocks on sm_80/89/90 than this never counts more than fit.
     * No plan of Gapfill's reaches it: its blocks of 128 threads or more are held by the warp slots first.
     */
    static final int MAX_BLOCKS_PER_SM = 16;

    /**
     * Blocks of {@code smemBytes} dynamic shared memory that fit one SM: each block reserves 1 KiB more, and 1 KiB of
     * the SM's shared memory is not available to blocks. The second term is measured, not documented: on the H100
     * two blocks of 115,712 bytes (2 × (115,712 + 1,024) = 228 KiB exactly) gave 1 resident block in the occupancy
     * API; with it, this formula and {@code ctasPerSm} of the int8 plan matched the API on all 236 plans of
     * cuda-native/dev/int8_mm/h100-e0aa70b-split-sweep.txt.
     */
    static long bySharedMemory(int smemBytes, DeviceInfo info) {
        return (info.smemPerSm() - 1024L) / (smemBytes + 1024L);
    }

    /**
     * Blocks of {@code threads} threads with {@code registers} registers per thread and {@code smemBytes} of dynamic
     * shared memory: the least of the register file (64 Ki registers, allocated per warp in steps of 8 per thread),
     * the warp slots (64 per SM, 48 on compute capability 8.6/8.7/8.9), {@link #MAX_BLOCKS_PER_SM} and
     * {@link #bySharedMemory}; at least 1.
     */
    static int blocksPerSm(int threads, int registers, int smemBytes, DeviceInfo info) {
        int warps = (threads + 31) / 32;
        int maxWarps = info.cc() == 86 || info.cc() == 87 || info.cc() == 89 ? 48 : 64;
        long byRegs = 65536 / ((registers + 7) / 8 * 8 * 32) / warps;
        long n = Math.min(Math.min(byRegs, maxWarps / warps), Math.min(MAX_BLOCKS_PER_SM, bySharedMemory(smemBytes, info)));
        return (int) Math.max(1, n);
    }
}
