package dev.gapfill.core.testing;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;

import java.util.Random;

/** Test data: random (never zero-filled) inputs and poisoned outputs. */
public final class Poison {
    private Poison() {}

    /**
     * The byte an output of {@code dt} is filled with before a run: 0xFF for floats (NaN in F32, F16 and BF16), 0x80
     * for integers. An I32 element of 0x80 bytes reads -2139062144, below any int8Mm result (at least
     * -128·127·{@code Int8Mm.MAX_K} = -2130446336) and any index or count; 0xFF bytes would read -1, a legal result.
     * I8 (no op writes it) reads -128.
     */
    public static int byteOf(DType dt) {
        return dt.isFloating() ? 0xff : 0x80;
    }

    /** Fills {@code t} with {@link #byteOf its poison} on {@code stream} (null: the per-thread stream). */
    public static void fill(Tensor t, Stream stream) {
        t.fillBytes(byteOf(t.dtype()), stream);
    }

    /** Fills {@code t} with {@link #byteOf its poison} on the per-thread stream. */
    public static void fill(Tensor t) {
        fill(t, null);
    }

    /** Whether every byte of {@code t} still holds {@link #byteOf its poison} (copies a device tensor to the host). */
    public static boolean isPoisoned(Tensor t) {
        java.nio.ByteBuffer raw = t.toRaw();
        byte p = (byte) byteOf(t.dtype());
        for (int i = 0; i < raw.limit(); i++) {
            if (raw.get(i) != p) {
                return false;
            }
        }
        return true;
    }

    /**
     * Uniform values in [-1, 1) exactly representable in {@code dt}, as a tensor on {@code device}; never 0 for floats
     * (the one draw that gives exactly 0 gives 0.5 instead).
     */
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
            float v = rnd.nextFloat() * 2 - 1;
            f[i] = v != 0 ? v : 0.5f;
        }
        return Tensor.of(device, dt, f, shape);
    }

    /**
     * Before a call that allocates its own output on the per-thread stream (the overloads that return a new tensor):
     * allocates {@code bytes} there, fills them with the poison of {@code dt} and frees them in stream order, so that the
     * pool hands that poisoned block to the op's allocation of the same size on the same stream (stream-ordered pools
     * reuse the last block freed on a stream; not guaranteed, but never weaker than no priming). Without it such an
     * output held whatever the block held before, often zeros or a previous test's result, which a bound can pass (a
     * read-only review of the verification module, fiftieth session).
     */
    public static void primePool(Device device, DType dt, long bytes) {
        if (!device.isCuda()) {
            return;
        }
        Stream s = Stream.perThread(device);
        try (Tensor block = Tensor.empty(device, DType.I8, s, bytes)) {
            block.fillBytes(byteOf(dt), s);
        }
    }

    /** {@link #primePool(Device, DType, long)} for an output of {@code dt} and {@code shape}. */
    public static void primePool(Device device, DType dt, long... shape) {
        long n = 1;
        for (long d : shape) {
            n = Math.multiplyExact(n, d);
        }
        primePool(device, dt, Math.multiplyExact(n, (long) dt.bytes()));
    }

    /**
     * An output tensor filled with {@link #byteOf its poison} (NaN for floats, -2139062144 for I32) so unwritten elements
     * show.
     */
    public static Tensor poisoned(Device device, DType dt, long... shape) {
        Tensor t = Tensor.empty(device, dt, shape);
        fill(t);
        if (device.isCuda()) {
            // The fill runs on the per-thread stream; tests launch on streams of their own (non-blocking: no
            // implicit order with it), so the poison must have landed before the tensor is handed out. Without
            // this, a late fill overwrote a finished output under compute-sanitizer synccheck (H100, fcc850b).
            Stream.perThread(device).synchronize();
        }
        return t;
    }
}
