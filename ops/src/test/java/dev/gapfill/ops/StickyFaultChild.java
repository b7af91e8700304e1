package dev.gapfill.ops;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.KernelArgs;
import dev.gapfill.core.KernelModule;
import dev.gapfill.core.StickyCudaException;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;

/**
 * Child process of {@link StickyFaultTest}: launches the test-only faulting kernel (a write through a
 * null pointer) and reports, one line each, how Gapfill surfaced it. Runs in its own JVM because a
 * sticky fault ruins the CUDA context for the rest of the process.
 */
public final class StickyFaultChild {
    private StickyFaultChild() {}

    public static void main(String[] args) {
        Device gpu = Device.cuda(0);
        try (Tensor warm = Tensor.of(gpu, DType.F32, new float[] {1, 2}, 2)) {
            System.out.println("BEFORE ok " + warm.toFloatArray()[1]);
        }
        Stream s = Stream.perThread(gpu);
        KernelModule.of("elementwise/scale_add").function(Gpu.device(0), "fault_for_tests")
                .launch(s, 1, 1, 1, 32, 1, 1, 0, KernelArgs.begin().i64(0L));
        try {
            s.synchronize();
            System.out.println("NO_ERROR");
        } catch (StickyCudaException e) {
            System.out.println("STICKY " + e.status() + " " + e.getMessage());
        }
        try {
            Tensor.empty(gpu, DType.F32, 4).close();
            System.out.println("NO_FAILFAST");
        } catch (StickyCudaException e) {
            System.out.println("FAILFAST " + e.status() + " " + e.getMessage());
        }
        System.out.println("EXIT clean");
        System.out.flush();
        // After a sticky fault, normal JVM exit was seen to hang in CUDA's process teardown (H100,
        // driver 580; docs/reliability.md). A service restarts such a process; the child halts.
        Runtime.getRuntime().halt(0);
    }
}
