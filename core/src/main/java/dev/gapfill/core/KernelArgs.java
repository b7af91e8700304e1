package dev.gapfill.core;

import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * Kernel parameters in the layout {@code cuLaunchKernel} expects: an array of pointers to values.
 * One reusable native buffer per thread, so launching allocates nothing:
 * {@code KernelArgs.begin().ptr(x).ptr(y).i32(n).f32(alpha)}.
 */
public final class KernelArgs {
    static final int MAX = 48;
    private static final ThreadLocal<KernelArgs> PER_THREAD = ThreadLocal.withInitial(KernelArgs::new);

    private final BytePointer values = Pointers.outliveScopes(new BytePointer((long) MAX * 8));
    private final LongPointer slots = Pointers.outliveScopes(new LongPointer(MAX));
    // The same memory seen as void**: JavaCPP passes a PointerPointer as the array itself, whereas a
    // plain Pointer argument for a void** parameter is treated as an out-parameter (its address is passed).
    private final PointerPointer<?> params = new PointerPointer<>(slots);
    private int count;
    /** Each argument's size in bytes (8 for a pointer or i64, 4 for i32 and f32), checked against the kernel's. */
    private final byte[] sizes = new byte[MAX];

    private KernelArgs() {
        long base = values.address();
        for (int i = 0; i < MAX; i++) {
            slots.put(i, base + 8L * i);
        }
    }

    /** The calling thread's argument buffer, emptied. Use it for one launch before calling begin() again. */
    public static KernelArgs begin() {
        KernelArgs a = PER_THREAD.get();
        a.count = 0;
        return a;
    }

    private long slot(int bytes) {
        if (count == MAX) {
            throw new GapfillException("internal: more than " + MAX + " kernel arguments");
        }
        sizes[count] = (byte) bytes;
        return 8L * count++;
    }

    /** A device pointer: the tensor's address (the tensor must be open). */
    public KernelArgs ptr(Tensor t) {
        return i64(t == null ? 0L : t.address());
    }

    public KernelArgs i64(long v) {
        values.putLong(slot(8), v);
        return this;
    }

    /** A 4-byte argument; the slot's other 4 bytes are zeroed (the slots are reused: no earlier launch's bytes remain). */
    public KernelArgs i32(int v) {
        long off = slot(4);
        values.putLong(off, 0L);
        values.putInt(off, v);
        return this;
    }

    /** A 4-byte float argument; the slot's other 4 bytes are zeroed, as for {@link #i32}. */
    public KernelArgs f32(float v) {
        long off = slot(4);
        values.putLong(off, 0L);
        values.putFloat(off, v);
        return this;
    }

    int count() { return count; }

    /** Argument {@code i}'s size in bytes. */
    int size(int i) { return sizes[i]; }

    /** The arguments' sizes, e.g. "[8, 8, 4]", for messages. */
    String describeSizes() {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < count; i++) {
            sb.append(i == 0 ? "" : ", ").append(sizes[i]);
        }
        return sb.append(']').toString();
    }

    PointerPointer<?> params() { return params; }
}
