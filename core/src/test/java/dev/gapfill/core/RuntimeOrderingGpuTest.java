package dev.gapfill.core;

import dev.gapfill.core.testing.Busy;
import dev.gapfill.core.testing.GpuTest;
import org.bytedeco.cuda.global.cudart;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Ordering and sharing rules of the runtime under several streams and threads. */
@GpuTest
class RuntimeOrderingGpuTest {
    private final Device gpu = Device.cuda(0);

    @Test void copyingInWaitsForWorkOnTheStreamTheTensorWasLastUsedOn() {
        int n = 1 << 20;
        try (Stream s = Stream.create(gpu);
             Tensor big = Tensor.empty(gpu, DType.I8, s, 512L << 20);
             Tensor sink = Tensor.empty(gpu, DType.I32, s, 1);
             Tensor x = Tensor.empty(gpu, DType.I32, s, n);
             Tensor y = Tensor.empty(gpu, DType.I32, s, n)) {
            big.fillBytes(0x5a, s);
            x.fillBytes(0x01, s);
            y.fillBytes(0x00, s);
            Busy.reads(s, big, sink, 20);  // about 3 ms: s is still busy when the host copies into x below
            Gpu.device(0).check(cudart.cudaMemcpyAsync(new DevicePointer(y.address()), new DevicePointer(x.address()),
                    x.byteSize(), cudart.cudaMemcpyDeviceToDevice, s.handle()), "cudaMemcpyAsync(D2D)");
            ByteBuffer twos = ByteBuffer.allocateDirect((int) x.byteSize());
            while (twos.hasRemaining()) {
                twos.put((byte) 0x02);
            }
            twos.flip();
            x.copyFromRaw(twos);  // must not overwrite x before s has copied it into y
            s.synchronize();
            int[] got = y.toIntArray();
            for (int i = 0; i < n; i += 4099) {
                assertEquals(0x01010101, got[i], "y[" + i + "] took x's new value before s read the old one");
            }
            assertEquals(0x02020202, x.toIntArray()[n - 1]);
        }
    }

    @Test void memoryReadOnTwoStreamsIsFreedAfterTheWorkOfBoth() {
        int n = 1 << 20;
        try (Stream s1 = Stream.create(gpu); Stream s2 = Stream.create(gpu);
             Tensor big = Tensor.empty(gpu, DType.I8, s1, 512L << 20);
             Tensor sink = Tensor.empty(gpu, DType.I32, s1, 1);
             Tensor y = Tensor.empty(gpu, DType.I32, s1, n);
             Tensor w = Tensor.empty(gpu, DType.I32, s2, n)) {
            Tensor x = Tensor.empty(gpu, DType.I32, s1, n);
            big.fillBytes(0x5a, s1);
            x.fillBytes(0x01, s1);
            y.fillBytes(0x00, s1);
            s1.synchronize();
            Busy.reads(s1, big, sink, 20);  // about 3 ms: s1 reads x below only after it
            CudaDevice d = Gpu.device(0);
            d.check(cudart.cudaMemcpyAsync(new DevicePointer(y.address()), new DevicePointer(x.address()), x.byteSize(),
                    cudart.cudaMemcpyDeviceToDevice, s1.handle()), "cudaMemcpyAsync(D2D on s1)");
            x.recordStream(s1);
            d.check(cudart.cudaMemcpyAsync(new DevicePointer(w.address()), new DevicePointer(x.address()), x.byteSize(),
                    cudart.cudaMemcpyDeviceToDevice, s2.handle()), "cudaMemcpyAsync(D2D on s2)");
            x.recordStream(s2);  // the last stream; s1 still has to read x
            x.close();
            // the pool hands x's block out again on s2, where x was freed: the fill must wait for s1's read
            try (Tensor z = Tensor.empty(gpu, DType.I32, s2, n)) {
                z.fillBytes(0x02, s2);
                s1.synchronize();
                s2.synchronize();
                assertReadTheOldX(y, "s1 read x after its memory was reused on s2");
                assertEquals(0x01010101, w.toIntArray()[n - 1]);
            }
        }
    }

    /**
     * A tensor read on twelve streams (a weight shared by a pool of threads, each on its own stream): recording the
     * ninth and later streams forgets the oldest behind an event instead of synchronizing it, so no record waits for
     * another stream's queued work (until the fiftieth session the first stream was synchronized here, about 30 ms of a
     * busy kernel); and the memory is still freed after the work of the forgotten stream.
     */
    @Test void aTensorUsedOnMoreThanEightStreamsWaitsForNoneAndIsFreedAfterEvery() {
        int n = 1 << 20;
        List<Stream> others = new ArrayList<>();
        try (Stream s0 = Stream.create(gpu);
             Tensor big = Tensor.empty(gpu, DType.I8, s0, 512L << 20);
             Tensor sink = Tensor.empty(gpu, DType.I32, s0, 1);
             Tensor y = Tensor.empty(gpu, DType.I32, s0, n)) {
            Tensor x = Tensor.empty(gpu, DType.I32, s0, n);
            big.fillBytes(0x5a, s0);
            x.fillBytes(0x01, s0);
            y.fillBytes(0x00, s0);
            s0.synchronize();
            CudaDevice d = Gpu.device(0);
            try {
                Busy.reads(s0, big, sink, 200);  // about 30 ms: s0 reads x below only after it
                d.check(cudart.cudaMemcpyAsync(new DevicePointer(y.address()), new DevicePointer(x.address()), x.byteSize(),
                        cudart.cudaMemcpyDeviceToDevice, s0.handle()), "cudaMemcpyAsync(D2D on s0)");
                x.recordStream(s0);
                for (int i = 0; i < 11; i++) {
                    Stream si = Stream.create(gpu);
                    others.add(si);
                    x.recordStream(si);  // from the ninth stream on, the oldest (s0 first) is forgotten
                }
                int rc = cudart.cudaStreamQuery(s0.handle());
                cudart.cudaGetLastError();  // cudaErrorNotReady is not an error
                assertEquals(cudart.cudaErrorNotReady, rc, "recording more than eight streams waited for s0's work");
                Stream last = others.get(others.size() - 1);
                x.close();  // freed on the last stream, after the events of the others, s0's forgotten one among them
                try (Tensor z = Tensor.empty(gpu, DType.I32, last, n)) {
                    z.fillBytes(0x02, last);
                    s0.synchronize();
                    last.synchronize();
                    assertReadTheOldX(y, "s0 read x after its memory was reused");
                }
            } finally {
                for (Stream o : others) {
                    o.close();
                }
            }
        }
    }

    @Test void concurrentLaunchesOfOneFunctionOnlyEverRaiseItsSharedMemoryLimit() throws InterruptedException {
        CudaDevice d = Gpu.device(0);
        int max = (int) d.info().smemPerBlockOptin();
        int threads = 8;
        int rounds = 40;
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final int id = t;
            Thread th = new Thread(() -> {
                try (Stream s = Stream.create(gpu); Tensor buf = Tensor.empty(gpu, DType.I8, s, 1 << 16);
                     Tensor sink = Tensor.empty(gpu, DType.I32, s, 1)) {
                    buf.fillBytes(0x5a, s);  // the kernel reads it: initialised (initcheck flagged the unfilled buffer at 398ff10)
                    KernelFunction read = KernelModule.of("harness/l2_flush").function(d, "l2_flush_read");
                    start.await();
                    for (int r = 0; r < rounds; r++) {
                        // sizes above the 48 KiB default, interleaved across threads, rising overall
                        int smem = Math.min(max, 49 * 1024 + ((id * 7 + r * 13) % 64 + r * 3) * 1024);
                        read.launch(s, 4, 1, 1, 128, 1, 1, smem, KernelArgs.begin().ptr(buf).i64(buf.byteSize() / 16).ptr(sink));
                    }
                    s.synchronize();
                } catch (Throwable e) {
                    failures.add(e);
                }
            });
            ts.add(th);
            th.start();
        }
        start.countDown();
        for (Thread th : ts) {
            th.join();
        }
        assertTrue(failures.isEmpty(), () -> "launches failed: " + failures.peek());
        try (Stream s = Stream.create(gpu); Tensor buf = Tensor.empty(gpu, DType.I8, s, 1 << 16);
             Tensor sink = Tensor.empty(gpu, DType.I32, s, 1)) {
            buf.fillBytes(0x5a, s);
            KernelModule.of("harness/l2_flush").function(d, "l2_flush_read").launch(s, 4, 1, 1, 128, 1, 1, max,
                    KernelArgs.begin().ptr(buf).i64(buf.byteSize() / 16).ptr(sink));
            s.synchronize();
        }
    }

    /** y holds the copy of x made before x's memory was reused (x was filled with 0x01 bytes), checked every 4099th int. */
    private static void assertReadTheOldX(Tensor y, String otherwise) {
        int[] got = y.toIntArray();
        for (int i = 0; i < got.length; i += 4099) {
            assertEquals(0x01010101, got[i], "y[" + i + "]: " + otherwise);
        }
    }
}
