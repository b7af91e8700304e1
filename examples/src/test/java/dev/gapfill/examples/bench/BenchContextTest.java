package dev.gapfill.examples.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

    @Test void everyPathTakesEveryPositionAndFollowsEveryOtherPathEquallyOftenOverAPeriod() {
        for (int p = 1; p <= 7; p++) {
            int period = p % 2 == 0 ? p : 2 * p;
            int[][] inSlot = new int[p][p];
            int[][] follows = new int[p][p];
            for (int rep = 0; rep < period; rep++) {
                boolean[] seen = new boolean[p];
                for (int slot = 0; slot < p; slot++) {
                    int i = BenchContext.pathAt(rep, slot, p);
                    assertFalse(seen[i], "path " + i + " twice in repetition " + rep + " of " + p);
                    seen[i] = true;
                    inSlot[i][slot]++;
                    if (slot > 0) {
                        follows[i][BenchContext.pathAt(rep, slot - 1, p)]++;
                    }
                }
            }
            for (int i = 0; i < p; i++) {
                for (int k = 0; k < p; k++) {
                    assertEquals(period / p, inSlot[i][k], "path " + i + " in slot " + k + " of " + p);
                    assertEquals(i == k ? 0 : period / p, follows[i][k], "path " + i + " after path " + k + " of " + p);
                }
            }
            for (int slot = 0; slot < p; slot++) {  // the pattern repeats with its period
                assertEquals(BenchContext.pathAt(1, slot, p), BenchContext.pathAt(1 + period, slot, p));
            }
        }
        int[] row0 = new int[4];
        int[] row1 = new int[4];
        for (int slot = 0; slot < 4; slot++) {
            row0[slot] = BenchContext.pathAt(0, slot, 4);
            row1[slot] = BenchContext.pathAt(1, slot, 4);
        }
        assertArrayEquals(new int[] {0, 3, 1, 2}, row0);
        assertArrayEquals(new int[] {1, 0, 2, 3}, row1);
    }

    @Test void shortCasesGetMoreRepetitionsInWholePeriodsOfTheOrder() {
        assertEquals(30, BenchContext.repsFor(BenchContext.SHORT_CASE_US, 30, 3), "at the limit: not short");
        assertEquals(30, BenchContext.repsFor(250.0, 30, 3));
        assertEquals(30, BenchContext.repsFor(Double.NaN, 30, 3), "no median: as before");
        // not short: reps rounded up to whole periods too (4 paths: 30 would be 7.5 periods)
        assertEquals(32, BenchContext.repsFor(250.0, 30, 4));
        assertEquals(30, BenchContext.repsFor(250.0, 30, 2));
        assertEquals(42, BenchContext.repsFor(250.0, 30, 7));  // period 14
        assertEquals(150, BenchContext.repsFor(4.2, 30, 3));   // period 6
        assertEquals(152, BenchContext.repsFor(4.2, 30, 4));   // period 4: 150 rounded up
        assertEquals(154, BenchContext.repsFor(19.9, 30, 7));  // period 14
        for (int p = 1; p <= 8; p++) {
            int period = p % 2 == 0 ? p : 2 * p;
            for (int reps : new int[] {1, 10, 30, 31}) {
                int total = BenchContext.repsFor(3.0, reps, p);
                assertEquals(0, total % period, "p=" + p + " reps=" + reps);
                assertTrue(total >= reps * BenchContext.SHORT_CASE_FACTOR && total < reps * BenchContext.SHORT_CASE_FACTOR + period);
                int longCase = BenchContext.repsFor(500.0, reps, p);
                assertEquals(0, longCase % period, "p=" + p + " reps=" + reps);
                assertTrue(longCase >= reps && longCase < reps + period);
            }
        }
    }

    @Test void readLineFitIsTheLeastSquaresLineOfNoisyPoints() {
        long[] bytes = {1_000_000L, 2_000_000L, 3_000_000L};
        double[] us = {2.0, 2.5, 3.6};  // slope 0.8 µs per MB (1250 GB/s), intercept 1.1 µs
        BenchContext.ReadLine line = BenchContext.fitReadLine(bytes, us);
        assertEquals(1.1, line.interceptUs(), 1e-9);  // mean (2 MB, 2.7 µs), slope 1.6 / 2 = 0.8
        assertEquals(1250.0, line.gbps(), 1e-6);
    }

    @Test void aPathWhoseEnqueueOutlastsTheFlushGetsExtraFlushesBeforeItsStartEvent() {
        double flush = 71.0;  // the H100's 4x-L2 flush
        assertEquals(0, BenchContext.extraFlushes(7.0, flush), "a custom launch");
        assertEquals(0, BenchContext.extraFlushes(41.3, flush), "gqa's vendor composition on a quick host");
        assertEquals(0, BenchContext.extraFlushes(0.75 * flush, flush), "at the share itself");
        assertEquals(1, BenchContext.extraFlushes(71.3, flush), "depthwise's vendor composition on a slow host");
        assertEquals(1, BenchContext.extraFlushes(1.5 * 0.75 * flush, flush));
        assertEquals(2, BenchContext.extraFlushes(2 * 0.75 * flush + 0.1, flush));
        assertEquals(24, BenchContext.extraFlushes(1300.0, flush), "the per-expert loop at E = 256");
        assertEquals(BenchContext.MAX_EXTRA_FLUSHES, BenchContext.extraFlushes(10_000.0, flush), "capped");
        assertEquals(0, BenchContext.extraFlushes(500.0, Double.NaN), "no flush time: no head start");
        assertEquals(0, BenchContext.extraFlushes(Double.NaN, flush));
        // with k extra flushes the host has (k + 1) flushes of GPU time to enqueue the path, at the share's margin
        for (double e = 1; e < 40 * flush; e += 3.7) {
            int k = BenchContext.extraFlushes(e, flush);
            assertTrue(k == BenchContext.MAX_EXTRA_FLUSHES || e <= (k + 1) * 0.75 * flush + 1e-9, e + " us with " + k);
            assertTrue(k == 0 || e > k * 0.75 * flush, e + " us with " + k + ": one fewer would do");
        }
    }

    @Test void aPathThatWaitsForTheGpuIsToldFromOneThatOnlyEnqueues() {
        double flush = 71.0;
        assertFalse(BenchContext.waitsForTheGpu(41.3, 43.0, flush), "gqa's vendor composition: the same time behind a flush");
        assertTrue(BenchContext.waitsForTheGpu(60.0, 60.0 + 68.0, flush), "the per-expert loop: its offsets copy waits out the flush");
        assertFalse(BenchContext.waitsForTheGpu(60.0, 60.0 + 0.5 * flush, flush), "at half a flush: not taken for a wait");
        assertFalse(BenchContext.waitsForTheGpu(60.0, 200.0, Double.NaN), "no flush time: no verdict");
    }

    @Test void theBacklogAPathIsTimedBehindOutlastsItsWholeEnqueueByAFlush() {
        double flush = 72.3;
        assertEquals(1, BenchContext.backlogFlushes(0.0, flush));
        assertEquals(2, BenchContext.backlogFlushes(7.0, flush), "a custom launch");
        assertEquals(2, BenchContext.backlogFlushes(flush, flush));
        // the demo's vendor MoE loop at T = 16: its offsets copy comes ~60 us into a 1606 us enqueue
        int k = BenchContext.backlogFlushes(1605.7, flush);
        assertEquals(24, k);
        assertTrue(k * flush >= 1605.7 + flush, "the backlog outlasts the enqueue by a flush");
        // a path that waits w us into its enqueue waits out what is left of the backlog then, k·flush - w: behind a
        // backlog it takes its idle time plus that, at least a flush more wherever the wait comes (w <= the idle time)
        for (double w : new double[] {0.0, 60.0, 1000.0, 1605.7}) {
            double behind = 1605.7 + Math.max(0, k * flush - w);
            assertTrue(BenchContext.waitsForTheGpu(1605.7, behind, flush), "a wait " + w + " us into the enqueue: " + behind);
        }
        // behind one flush (the old test) the late waits went unseen: only what is left of 72.3 us after w
        for (double w : new double[] {60.0, 1000.0}) {
            assertTrue(!BenchContext.waitsForTheGpu(1605.7, 1605.7 + Math.max(0, flush - w), flush), "one flush, a wait " + w + " us in");
        }
        assertFalse(BenchContext.waitsForTheGpu(1605.7, 1615.6, flush), "behind one flush the late wait went unseen");
        assertEquals(BenchContext.MAX_EXTRA_FLUSHES + 2, BenchContext.backlogFlushes(1e6, flush), "capped");
        assertEquals(1, BenchContext.backlogFlushes(500.0, Double.NaN), "no flush time");
        assertEquals(1, BenchContext.backlogFlushes(Double.NaN, flush));
        assertEquals(1, BenchContext.backlogFlushes(Double.POSITIVE_INFINITY, flush));
    }
}
