package dev.gapfill.ops;

import dev.gapfill.core.CudaDevice;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Resources;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.VendorHandles;
import dev.gapfill.core.testing.GpuTest;
import dev.gapfill.core.testing.Poison;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A short mixed workload on several threads (each op, vendor and custom paths, new shapes so the caches fill,
 * some tensors deliberately forgotten), then {@link Resources#release}: device memory held by Gapfill and the pool
 * return to the baseline, the caches are empty and the vendor handles and default streams of the ended threads are
 * destroyed. The workers end with work still queued, as a careless caller's threads would.
 */
@GpuTest
class MemoryBaselineGpuTest {
    private static final Device GPU = Device.cuda(0);

    private static void work(Random rnd, int iterations) {
        for (int it = 0; it < iterations; it++) {
            DType half = rnd.nextBoolean() ? DType.F16 : DType.BF16;
            int c = 1 + rnd.nextInt(64);
            int h = 1 + rnd.nextInt(20);
            int w = 1 + rnd.nextInt(20);
            try (Stream s = rnd.nextBoolean() ? Stream.create(GPU) : null) {
                // depthwise through cuDNN with no bias and RELU: the fused call's zero bias (the leak this test guards)
                DepthwiseConv3x3.Options dw = DepthwiseConv3x3.Options.builder().activation(DepthwiseConv3x3.Activation.RELU)
                        .backend(Backend.VENDOR).build();
                try (Tensor x = Poison.random(GPU, half, rnd, 1, c, h, w); Tensor wt = Poison.random(GPU, half, rnd, c, 3, 3);
                     Tensor y = Tensor.empty(GPU, half, 1, c, h, w)) {
                    DepthwiseConv3x3.apply(x, wt, null, null, y, dw, s);
                    DepthwiseConv3x3.apply(x, wt, null, null, y, dw.withBackend(Backend.CUSTOM), s);
                }
                int m = 1 + rnd.nextInt(48);
                int n = 16 * (1 + rnd.nextInt(8));
                int k = 16 * (1 + rnd.nextInt(8));
                try (Tensor a = Poison.random(GPU, DType.I8, rnd, m, k); Tensor wq = Poison.random(GPU, DType.I8, rnd, n, k);
                     Tensor acc = Tensor.empty(GPU, DType.I32, m, n)) {
                    Int8Mm.mm(a, wq, Int8Mm.Options.int32().withBackend(Backend.VENDOR), acc, s);
                    Int8Mm.mm(a, wq, Int8Mm.Options.int32(), acc, s);
                }
                try (Tensor a = Poison.random(GPU, half, rnd, 2, m, 24); Tensor b = Poison.random(GPU, half, rnd, 24, 8)) {
                    Bmm.bmm(a, b).close();                                                    // forgotten in flight: closed at once
                    Bmm.bmm(a, b, Bmm.Options.defaults().backend(Backend.VENDOR));           // result forgotten: the cleaner's
                }
                try (Tensor logits = Poison.random(GPU, DType.F32, rnd, 1 + rnd.nextInt(40), 16)) {
                    MoeRoute.route(logits, MoeRoute.Options.topK(2)).close();
                }
                GqaDecode.Problem p = GqaDecode.Problem.contiguous(1, 8, 2, 64, 16 + rnd.nextInt(64), GqaDecode.KvLayout.BHLD, half);
                try (Tensor q = Poison.random(GPU, half, rnd, 1, 8, 64); Tensor kc = Poison.random(GPU, half, rnd, 1, 2, p.maxLen(), 64);
                     Tensor vc = Poison.random(GPU, half, rnd, 1, 2, p.maxLen(), 64); Tensor lens = Tensor.ofInts(GPU, new int[] {p.maxLen()}, 1);
                     Tensor o = Tensor.empty(GPU, half, 1, 8, 64)) {
                    for (Backend be : new Backend[] {Backend.VENDOR, Backend.CUSTOM}) {
                        try (GqaDecodePlan plan = GqaDecode.plan(p, GPU, GqaDecode.Options.defaults().withBackend(be), s)) {
                            plan.run(q, GqaDecode.KvCache.bhld(kc, vc), lens, o, s);
                        }
                    }
                }
                if (s != null) {
                    s.synchronize();
                }
            }
        }
    }

    @Test void memoryReturnsToTheBaselineAfterAMultiThreadedWorkload() throws InterruptedException {
        CudaDevice d = Gpu.device(GPU);
        Resources.release(GPU);
        long bytes = d.bytesInUse();
        long pool = d.poolUsedBytes();
        long live = Tensor.liveOwnedTensors();
        int handles = VendorHandles.perThreadHandles();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            long seed = 77L + t;
            Thread th = new Thread(() -> {
                try {
                    work(new Random(seed), 6);  // and ends with work still queued on its default stream
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "memory-baseline-" + t);
            threads.add(th);
            th.start();
        }
        for (Thread th : threads) {
            th.join();
        }
        assertNull(failure.get(), () -> String.valueOf(failure.get()));
        assertTrue(VendorHandles.deadThreadHandles() > 0, "the ended threads left cuBLAS/cuDNN handles to release");
        assertTrue(Stream.endedThreadDefaultStreams() > 0, "the ended threads left their default streams to release");
        Map<String, Integer> caches = Resources.cacheSizes(GPU);
        assertTrue(caches.values().stream().mapToInt(Integer::intValue).sum() > 0, "the workload filled the op caches: " + caches);
        Resources.Report r = Resources.release(GPU);
        assertTrue(r.unreachableTensorsFreed() >= 0);
        assertEquals(bytes, d.bytesInUse(), "Gapfill's device bytes back to the baseline: " + r);
        assertEquals(bytes, r.bytesInUseAfter());
        assertEquals(pool, d.poolUsedBytes(), "the pool's used bytes back to the baseline");
        assertEquals(live, Tensor.liveOwnedTensors(), "every owned tensor freed");
        assertEquals(0, VendorHandles.deadThreadHandles(), "handles of ended threads destroyed");
        assertEquals(0, Stream.endedThreadDefaultStreams(), "default streams of ended threads destroyed");
        assertEquals(handles, VendorHandles.perThreadHandles(), "only the live threads' handles remain");
        assertEquals(0, Resources.cacheSizes(GPU).values().stream().mapToInt(Integer::intValue).sum(), "caches empty");
        work(new Random(5), 1);  // and everything works again afterwards (caches and handles refill)
        d.synchronize();
    }

    @Test void aThreadThatEndsDoesNotKeepItsHandles() throws InterruptedException {
        Resources.release(GPU);
        int before = VendorHandles.perThreadHandles();
        Thread t = new Thread(() -> {
            try (Tensor a = Tensor.of(GPU, DType.F32, new float[] {1, 2, 3, 4}, 1, 2, 2);
                 Tensor b = Bmm.bmm(a, a, Bmm.Options.defaults().backend(Backend.VENDOR))) {
                b.toFloatArray();
            }
        });
        t.start();
        t.join();
        assertEquals(before + 1, VendorHandles.perThreadHandles(), "the thread's cuBLAS handle outlives it until released");
        // creating a handle on another thread reaps the ended thread's
        Thread u = new Thread(() -> {
            try (Tensor a = Tensor.of(GPU, DType.F32, new float[] {1, 2, 3, 4}, 1, 2, 2);
                 Tensor b = Bmm.bmm(a, a, Bmm.Options.defaults().backend(Backend.VENDOR))) {
                b.toFloatArray();
                assertEquals(before + 1, VendorHandles.perThreadHandles(), "the dead thread's handle was destroyed, this one created");
            }
        });
        AtomicReference<Throwable> failure = new AtomicReference<>();
        u.setUncaughtExceptionHandler((th, e) -> failure.set(e));
        u.start();
        u.join();
        assertNull(failure.get(), () -> String.valueOf(failure.get()));
        assertEquals(1, VendorHandles.releaseDeadThreads());
        assertEquals(before, VendorHandles.perThreadHandles());
    }
}
