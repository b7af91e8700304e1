package dev.gapfill.examples.lessons;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.HalfFloats;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.Elementwise;

/**
 * Lesson 01 — devices, tensors, copies, streams and closing.
 *
 * <ol>
 *   <li>{@link Device#best()} is cuda:0 when a GPU is usable, otherwise the CPU reference backend.</li>
 *   <li>Tensors own their memory: close them (try-with-resources). Forgotten ones are freed by a
 *   Cleaner, which logs the leak with the tensor's id.</li>
 *   <li>Half types round to nearest even on the way in.</li>
 *   <li>Every op has an explicit-stream variant; without one it runs on the thread's default stream.</li>
 * </ol>
 */
public final class L01Tensors {
    private L01Tensors() {}

    public static void main(String[] args) {
        Device dev = Device.best();
        System.out.println("01_tensors on " + dev + (dev.isCpu() ? " (no GPU: " + Gpu.status().reason() + ")" : ""));
        float[] x = {0.1f, 0.2f, 0.3f, 1e-8f, 65504f, -2.5f};
        try (Tensor a = Tensor.of(dev, DType.F16, x, 2, 3)) {
            float[] back = a.toFloatArray();
            System.out.printf("F16 round trip of 0.1 = %s (nearest half), 1e-8 = %s (below the smallest subnormal)%n", back[0], back[3]);
            try (Tensor b = Tensor.of(dev, DType.F16, new float[] {1, 1, 1, 1, 1, 1}, 2, 3);
                 Tensor c = Tensor.empty(dev, DType.F16, 2, 3)) {
                c.fillBytes(0xff);  // NaN everywhere first: an element the op leaves unwritten fails the check below
                if (dev.isCuda()) {
                    // the allocations and the NaN fill above ran on this thread's default stream; s does not wait for
                    // it by itself, so wait here before queueing on s (else the fill could land after the op)
                    Stream.perThread(dev).synchronize();
                    try (Stream s = Stream.create(dev)) {
                        Elementwise.scaleAdd(a, b, 2f, -1f, c, s); // queued on s
                        s.synchronize();                            // wait for it
                    }
                } else {
                    Elementwise.scaleAdd(a, b, 2f, -1f, c, null);
                }
                float[] r = c.toFloatArray();
                System.out.printf("2a - b = [%s, %s, %s, ...] (2·65504 − 1 overflows F16: %s)%n", r[0], r[1], r[2], r[4]);
                for (int i = 0; i < r.length; i++) {  // every element: computed in fp32, rounded once to F16
                    float want = HalfFloats.halfToFloat(HalfFloats.floatToHalf(2 * back[i] - 1));
                    check(Float.compare(r[i], want) == 0, "2a - b at " + i + ": " + r[i] + ", not " + want);
                }
            }
            Tensor view = a.reshape(3, 2);
            System.out.println("reshape shares memory: " + view + "; closing the owner closes its views");
        }
        Tensor t = Tensor.empty(dev, DType.F32, 4);
        t.close();
        try {
            t.close();
        } catch (IllegalStateException e) {
            System.out.println("closing twice is an error, not a double free: " + e.getMessage());
        }
        if (dev.isCuda()) {
            System.out.printf("device memory held by Gapfill now: %d bytes (peak %d)%n", Gpu.device(dev).bytesInUse(),
                    Gpu.device(dev).peakBytes());
        }
        System.out.println("01_tensors: OK");
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException("lesson check failed: " + what);
        }
    }
}
