package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.GpuTest;
import org.bytedeco.cuda.global.cudart;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Tensors and ops on every device of a multi-GPU host, used concurrently from different threads. */
@GpuTest
class MultiGpuTest {
    @Test void everyDeviceWorksConcurrentlyFromItsOwnThreads() throws InterruptedException {
        int n = Gpu.deviceCount();
        assumeTrue(n >= 2, "needs at least 2 GPUs; this host has " + n);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int d = 0; d < n; d++) {
            for (int t = 0; t < 2; t++) {
                int dev = d;
                long seed = 31L * d + t;
                Thread th = new Thread(() -> {
                    try {
                        Device gpu = Device.cuda(dev);
                        Random rnd = new Random(seed);
                        for (int it = 0; it < 50; it++) {
                            int len = 1 + rnd.nextInt(100_000);
                            float[] x = new float[len];
                            for (int i = 0; i < len; i++) {
                                x[i] = rnd.nextFloat() - 0.5f;
                            }
                            try (Tensor a = Tensor.of(gpu, DType.F32, x, len); Stream s = Stream.create(gpu);
                                 Tensor c = Tensor.empty(gpu, DType.F32, s, len)) {
                                c.fillBytes(0xff, s);
                                Elementwise.scaleAdd(a, a, 1f, 1f, c, s);
                                s.synchronize();
                                float[] r = c.toFloatArray();
                                for (int i = 0; i < len; i++) {
                                    if (r[i] != 2 * x[i]) {
                                        throw new AssertionError("cuda:" + dev + " element " + i + ": " + r[i] + " != " + 2 * x[i]);
                                    }
                                }
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
                threads.add(th);
                th.start();
            }
        }
        for (Thread th : threads) {
            th.join();
        }
        assertNull(failure.get(), () -> String.valueOf(failure.get()));
    }

    @Test void anotherLibraryMovingTheCurrentDeviceDoesNotMisdirectTheNextCall() {
        // A service thread that also runs ONNX Runtime or PyTorch on another GPU: those libraries set the current
        // device themselves (cudaSetDevice) and Gapfill must not trust what it set last. Each round moves the current
        // device behind Gapfill's back before each allocation, copy, launch (a custom kernel, cuBLAS) and read-back on
        // the other device, and before the frees; every element is checked, and the op left its device current.
        int n = Gpu.deviceCount();
        assumeTrue(n >= 2, "needs at least 2 GPUs; this host has " + n);
        Random rnd = new Random(47);
        int[] current = new int[1];
        for (int round = 0; round < 8; round++) {
            int dev = round % 2;
            int other = 1 - dev;
            int len = 1 + rnd.nextInt(50_000);
            float[] x = new float[len];
            for (int i = 0; i < len; i++) {
                x[i] = rnd.nextFloat() - 0.5f;
            }
            Device gpu = Device.cuda(dev);
            long live = Gpu.device(dev).liveAllocations();
            assertEquals(0, cudart.cudaSetDevice(other), "cudaSetDevice(" + other + ") as another library would");
            try (Tensor a = Tensor.of(gpu, DType.F32, x, len)) {
                assertEquals(0, cudart.cudaSetDevice(other));
                try (Tensor c = Tensor.empty(gpu, DType.F32, len)) {
                    assertEquals(0, cudart.cudaSetDevice(other));
                    Elementwise.scaleAdd(a, a, 1f, 1f, c, null);
                    assertEquals(0, cudart.cudaGetDevice(current));
                    assertEquals(dev, current[0], "round " + round + ": the op ran with cuda:" + current[0] + " current");
                    assertEquals(0, cudart.cudaSetDevice(other));
                    float[] r = c.toFloatArray();
                    for (int i = 0; i < len; i++) {
                        assertEquals(2 * x[i], r[i], "round " + round + " cuda:" + dev + " element " + i);
                    }
                    assertEquals(0, cudart.cudaSetDevice(other));
                }  // freed with the other device current
            }
            assertEquals(live, Gpu.device(dev).liveAllocations(), "round " + round + ": cuda:" + dev + " allocations left (elementwise)");
            // cuBLAS (whose handle belongs to one device, which must be current) and the custom kernel: integer
            // values, so every path's fp32 sums are exact and equal the CPU reference's bits
            int batch = 64, m = 8, k = 16, nc = 8;
            float[] av = new float[batch * m * k];
            float[] bv = new float[batch * k * nc];
            for (int i = 0; i < av.length; i++) {
                av[i] = rnd.nextInt(5) - 2;
            }
            for (int i = 0; i < bv.length; i++) {
                bv[i] = rnd.nextInt(5) - 2;
            }
            try (Tensor ha = Tensor.of(Device.CPU, DType.F32, av, batch, m, k); Tensor hb = Tensor.of(Device.CPU, DType.F32, bv, batch, k, nc);
                 Tensor ref = Bmm.bmm(ha, hb)) {
                float[] want = ref.toFloatArray();
                for (Backend backend : new Backend[] {Backend.VENDOR, Backend.CUSTOM}) {
                    assertEquals(0, cudart.cudaSetDevice(other));
                    try (Tensor ga = ha.to(gpu); Tensor gb = hb.to(gpu)) {
                        assertEquals(0, cudart.cudaSetDevice(other));
                        try (Tensor got = Bmm.bmm(ga, gb, Bmm.Options.defaults().backend(backend))) {
                            assertEquals(0, cudart.cudaSetDevice(other));
                            assertArrayEquals(want, got.toFloatArray(), "round " + round + " cuda:" + dev + " bmm " + backend);
                        }
                    }
                }
            }
        }
    }

    @Test void tensorsOfDifferentDevicesAreRejectedBeforeLaunch() {
        int n = Gpu.deviceCount();
        assumeTrue(n >= 2, "needs at least 2 GPUs; this host has " + n);
        try (Tensor a = Tensor.of(Device.cuda(0), DType.F32, new float[] {1, 2}, 2);
             Tensor b = Tensor.of(Device.cuda(1), DType.F32, new float[] {1, 2}, 2);
             Tensor c = Tensor.empty(Device.cuda(0), DType.F32, 2)) {
            assertEquals("b", assertThrows(ArgumentException.class, () -> Elementwise.scaleAdd(a, b, 1, 1, c, null)).argument());
            try (Stream s1 = Stream.create(Device.cuda(1))) {
                assertEquals("stream", assertThrows(ArgumentException.class, () -> Elementwise.scaleAdd(a, a, 1, 1, c, s1)).argument());
            }
        }
    }
}
