package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.GpuTest;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.ops.GqaDecode.KvCache;
import dev.gapfill.ops.GqaDecode.KvLayout;
import dev.gapfill.ops.GqaDecode.Options;
import dev.gapfill.ops.GqaDecode.Problem;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * On the GPU: the aliasing an op allows (scaleAdd in place, out exactly a or b) gives the same bits as a separate
 * output, a partial overlap is refused before any launch, a launch whose 32-bit grid-stride index would wrap is refused
 * and leaves the device usable, and a KV cache of 2^31 elements or more runs through {@link Problem#of} as through a
 * plan of {@link Problem#contiguous}.
 */
@GpuTest
class AliasingAndIndexingGpuTest {
    private static final Device GPU = Device.cuda(0);

    @Test void scaleAddInPlaceEqualsASeparateOutput() {
        Random rnd = new Random(21);
        for (DType dt : new DType[] {DType.F32, DType.F16, DType.BF16}) {
            for (int n : new int[] {1, 7, 17, 97, 4099, 100_003}) {
                float alpha = rnd.nextFloat() * 4 - 2;
                float beta = rnd.nextFloat() * 4 - 2;
                try (Tensor ha = Poison.random(Device.CPU, dt, rnd, n); Tensor hb = Poison.random(Device.CPU, dt, rnd, n);
                     Tensor a = ha.to(GPU); Tensor b = hb.to(GPU); Tensor sep = Poison.poisoned(GPU, dt, n)) {
                    Elementwise.scaleAdd(a, b, alpha, beta, sep, null);
                    byte[] separate = bytes(sep);
                    Elementwise.scaleAdd(a, b, alpha, beta, a, null);  // out is a
                    assertArrayEquals(separate, bytes(a), dt + " n=" + n + ": out = a");
                    try (Tensor b2 = hb.to(GPU); Tensor a2 = ha.to(GPU)) {
                        Elementwise.scaleAdd(a2, b2, alpha, beta, b2, null);  // out is b
                        assertArrayEquals(separate, bytes(b2), dt + " n=" + n + ": out = b");
                    }
                    for (float x : sep.toFloatArray()) {
                        assertTrue(!Float.isNaN(x), dt + " n=" + n + ": an element unwritten (poison)");
                    }
                }
            }
        }
    }

    @Test void scaleAddRefusesAPartialOverlap() {
        try (Tensor parent = Poison.random(GPU, DType.F16, new Random(3), 64); Tensor b = Poison.random(GPU, DType.F16, new Random(4), 48)) {
            Tensor a = parent.strided(new long[] {48}, new long[] {1}, 0);
            Tensor out = parent.strided(new long[] {48}, new long[] {1}, 8);
            byte[] before = bytes(parent);
            assertEquals("out", assertThrows(ArgumentException.class, () -> Elementwise.scaleAdd(a, b, 1f, 1f, out, null)).argument());
            assertEquals("out", assertThrows(ArgumentException.class, () -> Elementwise.scaleAdd(b, a, 1f, 1f, out, null)).argument());
            assertArrayEquals(before, bytes(parent), "nothing was written");
        }
    }

    /** 2^31-2 elements pass the element-count check; the grid stride would wrap scale_add's int index: refused, nothing runs. */
    @Test void aLaunchWhoseIndexWouldWrapIsRefusedAndTheDeviceStaysUsable() {
        try (Tensor x = Tensor.empty(GPU, DType.F16, Integer.MAX_VALUE - 1L)) {
            ArgumentException e = assertThrows(ArgumentException.class, () -> Elementwise.scaleAdd(x, x, 1f, 1f, x, null));
            assertEquals("a", e.argument());
            assertTrue(e.getMessage().contains("32-bit indexing"), e.getMessage());
        }
        Gpu.device(GPU).synchronize();
        try (Tensor a = Tensor.of(GPU, DType.F32, new float[] {1, 2}, 2); Tensor c = Elementwise.scaleAdd(a, a, 1f, 1f)) {
            assertArrayEquals(new float[] {2, 4}, c.toFloatArray());
        }
    }

    /** Every path indexes the cache in 64 bits: decode (Problem.of) runs a [1, 1, 2^25, 64] cache (2^31 elements, 4 GiB each). */
    @Test void decodeTakesACacheOf2To31Elements() {
        int hq = 4;
        int d = 64;
        long cap = 1L << 25;
        int len = 300;
        Random rnd = new Random(8);
        try (Tensor k = Tensor.empty(GPU, DType.F16, 1, 1, cap, d); Tensor v = Tensor.empty(GPU, DType.F16, 1, 1, cap, d);
             Tensor hk = Poison.random(Device.CPU, DType.F16, rnd, 1, 1, len, d); Tensor hv = Poison.random(Device.CPU, DType.F16, rnd, 1, 1, len, d);
             Tensor q = Poison.random(GPU, DType.F16, rnd, 1, hq, d); Tensor lens = Tensor.ofInts(GPU, new int[] {len}, 1);
             Tensor viaOf = Poison.poisoned(GPU, DType.F16, 1, hq, d); Tensor viaPlan = Poison.poisoned(GPU, DType.F16, 1, hq, d)) {
            k.fillBytes(0);
            v.fillBytes(0);
            for (Tensor[] pair : new Tensor[][] {{k, hk}, {v, hv}}) {  // the first len positions: random keys and values
                Tensor head = Tensor.borrow(GPU, DType.F16, pair[0].address(), new long[] {1, 1, len, d}, null);
                head.copyFromRaw(pair[1].toRaw());
                head.close();
            }
            KvCache cache = KvCache.bhld(k, v);
            Options custom = Options.defaults().withBackend(Backend.CUSTOM);
            Problem p = Problem.of(q, cache);
            assertEquals(Problem.contiguous(1, hq, 1, d, (int) cap, KvLayout.BHLD, DType.F16), p);
            GqaDecode.decode(q, cache, lens, viaOf, null, custom, null);
            try (GqaDecodePlan plan = GqaDecode.plan(Problem.contiguous(1, hq, 1, d, (int) cap, KvLayout.BHLD, DType.F16), GPU, custom, null)) {
                plan.run(q, cache, lens, viaPlan, null);
            }
            assertArrayEquals(bytes(viaPlan), bytes(viaOf));
            for (float x : viaOf.toFloatArray()) {
                assertTrue(Float.isFinite(x), "o written and finite");
            }
        }
    }

    private static byte[] bytes(Tensor t) {
        java.nio.ByteBuffer b = t.toRaw();
        byte[] a = new byte[b.remaining()];
        b.get(a);
        return a;
    }
}
