package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.GpuTest;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;

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
