package dev.gapfill.examples.demo;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.HalfFloats;
import dev.gapfill.core.Tensor;

import java.nio.ShortBuffer;
import java.util.SplittableRandom;

/**
 * Large random inputs on the host (expert weights, KV caches of up to a few hundred million elements), written straight
 * into the tensor's buffer: uniform in [−scale, scale), rounded once to the dtype, so the device copy and the reference
 * read the same values. (core's {@code Poison.random} does the same through a float array, for small tensors.)
 */
final class RandomData {
    private RandomData() {}

    /** A CPU tensor of uniform values in [−scale, scale), F16 or BF16. */
    static Tensor uniform(SplittableRandom rnd, DType dt, double scale, long... shape) {
        if (dt != DType.F16 && dt != DType.BF16) {
            throw new ArgumentException("dtype", "F16 or BF16", String.valueOf(dt));
        }
        Tensor t = Tensor.empty(Device.CPU, dt, shape);
        ShortBuffer b = t.hostBuffer().asShortBuffer();
        int n = (int) t.numel();
        for (int i = 0; i < n; i++) {
            double v = (2 * rnd.nextDouble() - 1) * scale;
            b.put(i, dt == DType.BF16 ? HalfFloats.doubleToBf16(v) : HalfFloats.doubleToHalf(v));
        }
        return t;
    }
}
