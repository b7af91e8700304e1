package dev.gapfill.verify;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.GpuTest;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.Bmm;
import org.bytedeco.cuda.cudart.CUgraphExec_st;
import org.bytedeco.cuda.cudart.CUgraph_st;
import org.bytedeco.cuda.global.cudart;
import org.junit.jupiter.api.Test;

import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * A thread's first vendor call while its stream is being captured (a read-only review, fiftieth session): making the
 * thread's cuBLAS handle allocates device memory, and destroying ended threads' handles first synchronizes the device;
 * either invalidated the capture with a raw CUDA error on bmm's vendor path. It is refused naming the stream, the capture
 * stays valid, and once the handle exists (a vendor call outside the capture) the same call captures and replays.
 */
@GpuTest
class VendorHandleCaptureGpuTest {
    private static final Device GPU = Device.cuda(0);

    @Test void aFreshThreadsFirstVendorCallUnderCaptureIsRefusedAndTheCaptureStaysValid() throws InterruptedException {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread fresh = new Thread(() -> {
            try {
                onAFreshThread();
            } catch (Throwable t) {
                failure.set(t);
            }
        }, "vendor-capture-fresh");
        fresh.start();
        fresh.join();
        assertNull(failure.get(), () -> "on the fresh thread: " + failure.get());
    }

    private static void onAFreshThread() {
        var cuda = Gpu.device(GPU);
        Random rnd = new Random(3);
        Bmm.Options vendor = Bmm.Options.defaults().backend(Backend.VENDOR);
        try (Stream s = Stream.create(GPU);
             Tensor ha = Poison.random(Device.CPU, DType.F16, rnd, 64, 96, 96);
             Tensor hb = Poison.random(Device.CPU, DType.F16, rnd, 64, 96, 96);
             Tensor a = ha.to(GPU); Tensor b = hb.to(GPU);
             Tensor out = Poison.poisoned(GPU, DType.F16, 64, 96, 96)) {
            // 1. no handle on this thread yet: refused before anything is made, and the capture ends cleanly
            Throwable refused = captureOnce(s, () -> Bmm.bmm(a, b, out, vendor, s), null);
            ArgumentException e = assertInstanceOf(ArgumentException.class, refused, String.valueOf(refused));
            assertEquals("stream", e.argument(), e.toString());
            // 2. a vendor call outside the capture makes the handle; then the same call captures and replays its result
            Bmm.bmm(a, b, out, vendor, s);
            s.synchronize();
            float[] eager = out.toFloatArray();
            CUgraph_st graph = new CUgraph_st();
            Throwable captured = captureOnce(s, () -> Bmm.bmm(a, b, out, vendor, s), graph);
            assertNull(captured, String.valueOf(captured));
            CUgraphExec_st exec = new CUgraphExec_st();
            try {
                assertFalse(graph.isNull(), "the capture holds the vendor call");
                cuda.check(cudart.cudaGraphInstantiate(exec, graph, 0L), "cudaGraphInstantiate");
                out.fillBytes(0xff, s);
                cuda.check(cudart.cudaGraphLaunch(exec, s.handle()), "cudaGraphLaunch");
                s.synchronize();
                assertArrayEquals(eager, out.toFloatArray(), "the replayed vendor call matches the eager one");
            } finally {
                if (!exec.isNull()) {
                    cudart.cudaGraphExecDestroy(exec);
                }
                cudart.cudaGraphDestroy(graph);
            }
        }
    }

    /**
     * Captures {@code call} on {@code s} in thread-local mode and returns what it threw (null: nothing). The capture
     * must end without an error either way; the graph is kept in {@code keep}, or destroyed when that is null.
     */
    private static Throwable captureOnce(Stream s, Runnable call, CUgraph_st keep) {
        var cuda = Gpu.device(GPU);
        CUgraph_st graph = keep != null ? keep : new CUgraph_st();
        cuda.check(cudart.cudaStreamBeginCapture(s.handle(), cudart.cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
        Throwable thrown = null;
        try {
            call.run();
        } catch (Throwable t) {
            thrown = t;
        }
        cuda.check(cudart.cudaStreamEndCapture(s.handle(), graph), "cudaStreamEndCapture (the capture stayed valid)");
        if (keep == null && !graph.isNull()) {
            cudart.cudaGraphDestroy(graph);
        }
        return thrown;
    }
}
