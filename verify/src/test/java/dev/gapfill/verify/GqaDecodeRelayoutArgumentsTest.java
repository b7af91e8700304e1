package dev.gapfill.verify;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.GqaDecode.KvCache;
import dev.gapfill.ops.GqaDecode.KvLayout;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * GqaDecodeProblems' cache builders (relayout, to, close, random, uniform) check their arguments before any work, name
 * the offending one, and leave no tensor allocated when they refuse or fail part-way. CPU tensors only.
 */
class GqaDecodeRelayoutArgumentsTest {
    private static final long SEED = 20261128L;

    /** The argument {@code call} names in its ArgumentException; no tensor it allocated stays allocated. */
    private static String argumentOf(Runnable call) {
        long live = Tensor.liveOwnedTensors();
        long leaks = Tensor.leakCount();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call::run);
        assertTrue(e instanceof ArgumentException, "names its argument: " + e);
        assertNoneLeft(live, leaks, "a tensor allocated by the refused call stayed allocated: " + e);
        return ((ArgumentException) e).argument();
    }

    /** No tensor allocated since {@code live} and {@code leaks} were read stays allocated (the cleaner may free others). */
    private static void assertNoneLeft(long live, long leaks, String what) {
        assertEquals(live - (Tensor.leakCount() - leaks), Tensor.liveOwnedTensors(), what);
    }

    private static Tensor bhld(DType dt, long b, long hkv, long cap, long d) {
        return GqaDecodeProblems.uniform(new Random(SEED), dt, b, hkv, cap, d);
    }

    @Test void relayoutRefusesMissingClosedOrMisshapenTensors() {
        try (Tensor k = bhld(DType.F16, 2, 2, 5, 8); Tensor v = bhld(DType.F16, 2, 2, 5, 8);
             Tensor rank3 = GqaDecodeProblems.uniform(new Random(1), DType.F16, 2, 10, 8);
             Tensor ints = Tensor.ofInts(Device.CPU, new int[2 * 2 * 5 * 8], 2, 2, 5, 8);
             Tensor bf16 = bhld(DType.BF16, 2, 2, 5, 8); Tensor shorter = bhld(DType.F16, 2, 2, 4, 8)) {
            for (KvLayout layout : KvLayout.values()) {
                Random rnd = new Random(SEED);
                assertEquals("k", argumentOf(() -> GqaDecodeProblems.relayout(null, v, layout, 4, rnd)), layout.toString());
                assertEquals("v", argumentOf(() -> GqaDecodeProblems.relayout(k, null, layout, 4, rnd)), layout.toString());
                assertEquals("k", argumentOf(() -> GqaDecodeProblems.relayout(rank3, v, layout, 4, rnd)), layout.toString());
                assertEquals("k", argumentOf(() -> GqaDecodeProblems.relayout(ints, v, layout, 4, rnd)), layout.toString());
                assertEquals("v", argumentOf(() -> GqaDecodeProblems.relayout(k, bf16, layout, 4, rnd)), layout.toString());
                // a v shorter than k: the copy would read past v's end (BLHD and PAGED allocated their outputs first)
                assertEquals("v", argumentOf(() -> GqaDecodeProblems.relayout(k, shorter, layout, 4, rnd)), layout.toString());
                assertEquals("v", argumentOf(() -> GqaDecodeProblems.relayout(shorter, k, layout, 4, rnd)), layout.toString());
            }
            assertEquals("layout", argumentOf(() -> GqaDecodeProblems.relayout(k, v, null, 4, new Random(SEED))));
        }
        Tensor closed = bhld(DType.F16, 1, 1, 3, 8);
        closed.close();
        try (Tensor v = bhld(DType.F16, 1, 1, 3, 8)) {
            assertEquals("k", argumentOf(() -> GqaDecodeProblems.relayout(closed, v, KvLayout.BLHD, 4, new Random(SEED))));
            assertEquals("v", argumentOf(() -> GqaDecodeProblems.relayout(v, closed, KvLayout.PAGED, 4, new Random(SEED))));
        }
    }

    @Test void pagedRelayoutRefusesBadPageSizesAndAMissingRandomSource() {
        try (Tensor k = bhld(DType.BF16, 3, 2, 17, 8); Tensor v = bhld(DType.BF16, 3, 2, 17, 8)) {
            for (int page : new int[] {0, -4, 3, 24, Integer.MIN_VALUE}) {
                assertEquals("pageSize", argumentOf(() -> GqaDecodeProblems.relayout(k, v, KvLayout.PAGED, page, new Random(SEED))),
                        "page " + page);
            }
            // one page of 2^30 positions per sequence: 3·2^30·2·8 halves, far past a CPU tensor's 2^31-1 bytes
            assertEquals("pageSize", argumentOf(() -> GqaDecodeProblems.relayout(k, v, KvLayout.PAGED, 1 << 30, new Random(SEED))));
            assertEquals("rnd", argumentOf(() -> GqaDecodeProblems.relayout(k, v, KvLayout.PAGED, 4, null)));
            // contiguous layouts use neither
            long live = Tensor.liveOwnedTensors();
            long leaks = Tensor.leakCount();
            for (KvLayout layout : new KvLayout[] {KvLayout.BHLD, KvLayout.BLHD}) {
                KvCache c = GqaDecodeProblems.relayout(k, v, layout, 0, null);
                GqaDecodeProblems.close(c);
            }
            assertNoneLeft(live, leaks, "the contiguous caches closed");
        }
    }

    @Test void everyLayoutHoldsTheSameRowsAndClosesCleanly() {
        long live = Tensor.liveOwnedTensors();
        long leaks = Tensor.leakCount();
        try (Tensor k = bhld(DType.F16, 2, 3, 7, 8); Tensor v = bhld(DType.F16, 2, 3, 7, 8)) {
            short[] kb = bits(k);
            for (KvLayout layout : KvLayout.values()) {
                KvCache c = GqaDecodeProblems.relayout(k, v, layout, 4, new Random(SEED));
                try {
                    assertEquals(layout, c.layout());
                    for (int b = 0; b < 2; b++) {
                        for (int h = 0; h < 3; h++) {
                            for (int pos = 0; pos < 7; pos++) {
                                for (int e = 0; e < 8; e++) {
                                    int src = ((b * 3 + h) * 7 + pos) * 8 + e;
                                    assertEquals(kb[src], (short) c.k().getRawBits(at(c, b, h, pos, e)), layout + " k " + b + "," + h + "," + pos);
                                }
                            }
                        }
                    }
                } finally {
                    GqaDecodeProblems.close(c);
                }
            }
        }
        assertNoneLeft(live, leaks, "every cache closed");
    }

    /** The flat element index of (b, h, pos, e) in the cache's k. */
    private static long at(KvCache c, int b, int h, int pos, int e) {
        int hkv = 3;
        int d = 8;
        switch (c.layout()) {
            case BHLD: return (((long) b * hkv + h) * 7 + pos) * d + e;
            case BLHD: return (((long) b * 7 + pos) * hkv + h) * d + e;
            default: {
                int page = c.blockTable().toIntArray()[(int) (b * c.blockTable().dim(1) + pos / 4)];
                return (((long) page * 4 + pos % 4) * hkv + h) * d + e;
            }
        }
    }

    private static short[] bits(Tensor t) {
        short[] s = new short[(int) t.numel()];
        for (int i = 0; i < s.length; i++) {
            s[i] = (short) t.getRawBits(i);
        }
        return s;
    }

    @Test void toRefusesBrokenCachesBeforeCopyingAnything() {
        try (Tensor k = bhld(DType.F16, 1, 1, 4, 8); Tensor v = bhld(DType.F16, 1, 1, 4, 8)) {
            Tensor closedV = bhld(DType.F16, 1, 1, 4, 8);
            closedV.close();
            // k would have been copied, then v's copy failed: the copy of k stayed allocated
            assertEquals("c.v", argumentOf(() -> GqaDecodeProblems.to(KvCache.bhld(k, closedV), Device.CPU)));
            assertEquals("c.k", argumentOf(() -> GqaDecodeProblems.to(KvCache.bhld(null, v), Device.CPU)));
            assertEquals("c.blockTable", argumentOf(() -> GqaDecodeProblems.to(new KvCache(KvLayout.PAGED, k, v, null), Device.CPU)));
            assertEquals("c", argumentOf(() -> GqaDecodeProblems.to(new KvCache(null, k, v, null), Device.CPU)));
            assertEquals("c", argumentOf(() -> GqaDecodeProblems.to(null, Device.CPU)));
            assertEquals("device", argumentOf(() -> GqaDecodeProblems.to(KvCache.bhld(k, v), null)));
            KvCache copy = GqaDecodeProblems.to(KvCache.blhd(k, v), Device.CPU);
            assertEquals(KvLayout.BLHD, copy.layout());
            GqaDecodeProblems.close(copy);
        }
    }

    @Test void closeClosesEveryTensorEvenWhenOneWasClosedAlready() {
        Tensor k = bhld(DType.F16, 1, 1, 4, 8);
        Tensor v = bhld(DType.F16, 1, 1, 4, 8);
        Tensor table = Tensor.ofInts(Device.CPU, new int[] {0}, 1, 1);
        k.close();
        assertThrows(IllegalStateException.class, () -> GqaDecodeProblems.close(KvCache.paged(k, v, table)));
        assertTrue(v.isClosed() && table.isClosed(), "v and the block table closed after k's second close threw");
        assertEquals("c", argumentOf(() -> GqaDecodeProblems.close(null)));

        GqaDecodeProblems.HostCase host = GqaDecodeProblems.random(new Random(SEED), DType.F16, 2, 1, 8, 4, new int[] {4});
        host.q().close();
        assertThrows(IllegalStateException.class, host::close);
        assertTrue(host.k().isClosed() && host.v().isClosed(), "k and v closed after q's second close threw");
    }

    @Test void randomAndUniformRefuseBadShapesBeforeAllocating() {
        Random rnd = new Random(SEED);
        int[] lens = {3, 0};
        assertEquals("rnd", argumentOf(() -> GqaDecodeProblems.random(null, DType.F16, 2, 1, 8, 4, lens)));
        assertEquals("dt", argumentOf(() -> GqaDecodeProblems.random(rnd, null, 2, 1, 8, 4, lens)));
        assertEquals("dt", argumentOf(() -> GqaDecodeProblems.random(rnd, DType.I8, 2, 1, 8, 4, lens)));
        assertEquals("lens", argumentOf(() -> GqaDecodeProblems.random(rnd, DType.F16, 2, 1, 8, 4, null)));
        assertEquals("lens", argumentOf(() -> GqaDecodeProblems.random(rnd, DType.F16, 2, 1, 8, 4, new int[0])));
        assertEquals("hq", argumentOf(() -> GqaDecodeProblems.random(rnd, DType.F16, 0, 1, 8, 4, lens)));
        assertEquals("hkv", argumentOf(() -> GqaDecodeProblems.random(rnd, DType.F16, 2, -1, 8, 4, lens)));
        assertEquals("d", argumentOf(() -> GqaDecodeProblems.random(rnd, DType.F16, 2, 1, 0, 4, lens)));
        assertEquals("capacity", argumentOf(() -> GqaDecodeProblems.random(rnd, DType.F16, 2, 1, 8, 0, lens)));
        // q fits, K [1, 1, 2^16, 2^16] halves is 2^33 bytes: q was allocated, then K's element count wrapped to 0 and q leaked
        assertEquals("capacity", argumentOf(() -> GqaDecodeProblems.random(rnd, DType.F16, 1, 1, 1 << 16, 1 << 16, new int[1])));
        assertEquals("shape", argumentOf(() -> GqaDecodeProblems.uniform(rnd, DType.F16, 2, -1)));
        assertEquals("shape", argumentOf(() -> GqaDecodeProblems.uniform(rnd, DType.F16, 0, 8)));
        assertEquals("shape", argumentOf(() -> GqaDecodeProblems.uniform(rnd, DType.F32, 1 << 16, 1 << 16)));
        assertEquals("shape", argumentOf(() -> GqaDecodeProblems.uniform(rnd, DType.F32, (long[]) null)));
        assertEquals("rnd", argumentOf(() -> GqaDecodeProblems.uniform(null, DType.F32, 2)));
        assertEquals("dt", argumentOf(() -> GqaDecodeProblems.uniform(rnd, DType.I32, 2)));
        // lengths above the capacity stay allowed (the op clamps them; GqaDecodeGpuTest's "clamped" cases use that)
        try (GqaDecodeProblems.HostCase host = GqaDecodeProblems.random(rnd, DType.BF16, 4, 2, 8, 3, new int[] {5000, 3})) {
            assertArrayEquals(new int[] {5000, 3}, host.lens());
            assertEquals(3, host.capacity());
        }
    }
}
