package dev.gapfill.core.testing;

import dev.gapfill.core.CudaDevice;
import dev.gapfill.core.KernelArgs;
import dev.gapfill.core.KernelFunction;
import dev.gapfill.core.KernelModule;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;

/** Keeps a stream busy, so that work queued after it on that stream starts late: for ordering tests. */
public final class Busy {
    private Busy() {}

    /**
     * Queues {@code times} full reads of {@code big} (the harness's L2-flush kernel, 2 blocks per SM) on {@code s};
     * with {@code big} several times the L2 each read takes about 0.15 ms on an H100, so 20 keep it busy ~3 ms.
     * {@code sink} is one I32 the kernel writes.
     */
    public static void reads(Stream s, Tensor big, Tensor sink, int times) {
        CudaDevice d = s.cudaDevice();
        KernelFunction read = KernelModule.of("harness/l2_flush").function(d, "l2_flush_read");
        for (int i = 0; i < times; i++) {
            read.launch(s, 2 * d.info().smCount(), 1, 1, 512, 1, 1, 0,
                    KernelArgs.begin().ptr(big).i64(big.byteSize() / 16).ptr(sink));
        }
    }
}
