package dev.gapfill.core.testing;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;

import java.util.Random;

/** Test data: random (never zero-filled) inputs and poisoned outputs. */
public final class Poison {
    private Poison() {}

    /** Uniform values in [-1, 1) exactly representable in {@code dt}, as a tensor on {@code device}. */
    public static Tensor random(Device device, DType dt, Random rnd, long... shape) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        if (dt == DType.I8) {
            byte[] b = new byte[(int) n];
            for (int i = 0; i < b.length; i++) {
                b[i] = (byte) (rnd.nextInt(255) - 127);
            }
            return Tensor.ofBytes(device, b, shape);
        }
        if (dt == DType.I32) {
            int[] v = new int[(int) n];
            for (int i = 0; i < v.length; i++) {
                v[i] = rnd.nextInt(2001) - 1000;
            }
            return Tensor.ofInts(device, v, shape);
        }
        float[] f = new float[(int) n];
        for (int i = 0; i < f.length; i++) {
            f[i] = rnd.nextFloat() * 2 - 1;
        }
        return Tensor.of(device, dt, f, shape);
    }

    /** An output tensor filled with 0xFF bytes (NaN for floats, -1 for integers) so unwritten elements show. */
    public static Tensor poisoned(Device device, DType dt, long... shape) {
        Tensor t = Tensor.empty(device, dt, shape);
        t.fillBytes(0xff);
        if (device.isCuda()) {
            // The fill runs on the per-thread stream; tests launch on streams of their own (non-blocking: no
            // implicit order with it), so the poison must have landed before the tensor is handed out. Without
            // this, a late fill overwrote a finished output under compute-sanitizer synccheck (H100, fcc850b).
            Stream.perThread(device).synchronize();
        }
        return t;
    }
}
