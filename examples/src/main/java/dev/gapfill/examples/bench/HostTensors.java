package dev.gapfill.examples.bench;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;

import java.util.Random;

/** Host tensors of random inputs for the checks and the benchmarks (never zeros: uniform in [-1, 1)). */
public final class HostTensors {
    private HostTensors() { }

    /**
     * Uniform values in [-1, 1), never exactly 0 ({@code GapfillArbitraries.uniformNonZero}), rounded to {@code dt}, on the
     * host; {@code rnd} is drawn once per element, in order.
     */
    public static Tensor uniform(DType dt, Random rnd, long... shape) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        float[] f = new float[Math.toIntExact(n)];
        for (int i = 0; i < f.length; i++) {
            f[i] = dev.gapfill.verify.arbitraries.GapfillArbitraries.uniformNonZero(rnd, -1, 1);
        }
        return Tensor.of(Device.CPU, dt, f, shape);
    }
}
