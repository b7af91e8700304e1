package dev.gapfill.examples.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The host-side arithmetic of BenchContext (no GPU). */
class BenchContextTest {
    @Test void readLineFitRecoversInterceptAndBandwidth() {
        long[] bytes = {8L << 20, 32L << 20, 128L << 20};
        double[] us = new double[3];
        for (int i = 0; i < 3; i++) {
            us[i] = 3.96 + bytes[i] / (3115.0 * 1e3);  // µs: bytes / (GB/s · 1e3)
        }
        BenchContext.ReadLine line = BenchContext.fitReadLine(bytes, us);
        assertEquals(3.96, line.interceptUs(), 1e-9);
        assertEquals(3115.0, line.gbps(), 1e-6);
    }

    @Test void readLineFitIsTheLeastSquaresLineOfNoisyPoints() {
        long[] bytes = {1_000_000L, 2_000_000L, 3_000_000L};
        double[] us = {2.0, 2.5, 3.6};  // slope 0.8 µs per MB (1250 GB/s), intercept 1.1 µs
        BenchContext.ReadLine line = BenchContext.fitReadLine(bytes, us);
        assertEquals(1.1, line.interceptUs(), 1e-9);  // mean (2 MB, 2.7 µs), slope 1.6 / 2 = 0.8
        assertEquals(1250.0, line.gbps(), 1e-6);
    }
}
