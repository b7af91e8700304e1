package dev.gapfill.core;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Argument validation shared by every op. Each check throws {@link ArgumentException} naming the
 * argument, what was expected and what was received. All checks run before any launch.
 */
public final class Checks {
    private Checks() {}

    /** Not null and open. */
    public static Tensor open(String name, Tensor t) {
        if (t == null) {
            throw new ArgumentException(name, "a tensor", "null");
        }
        t.ensureOpen(name);
        return t;
    }

    public static void rank(String name, Tensor t, int... allowed) {
        for (int r : allowed) {
            if (t.rank() == r) {
                return;
            }
        }
        throw new ArgumentException(name, "rank " + join(allowed) + " tensor", "rank " + t.rank() + " " + Arrays.toString(t.shape()));
    }

    public static void dtype(String name, Tensor t, Set<DType> allowed) {
        if (!allowed.contains(t.dtype())) {
            throw new ArgumentException(name, "dtype in " + allowed, t.dtype().toString());
        }
    }

    public static void dtype(String name, Tensor t, DType expected) {
        if (t.dtype() != expected) {
            throw new ArgumentException(name, "dtype " + expected, t.dtype().toString());
        }
    }

    public static void contiguous(String name, Tensor t) {
        if (!t.isContiguous()) {
            throw new ArgumentException(name, "a contiguous (row-major) tensor",
                    "shape " + Arrays.toString(t.shape()) + " strides " + Arrays.toString(t.strides()));
        }
    }

    public static void sameDevice(String name, Tensor t, Device d) {
        if (!t.device().equals(d)) {
            throw new ArgumentException(name, "a tensor on " + d + " (all tensors of one call share a device)", "a tensor on " + t.device());
        }
    }

    /** Shape must equal {@code expected}; a negative entry matches anything. */
    public static void shape(String name, Tensor t, String legend, long... expected) {
        long[] s = t.shape();
        boolean ok = s.length == expected.length;
        for (int i = 0; ok && i < s.length; i++) {
            ok = expected[i] < 0 || expected[i] == s[i];
        }
        if (!ok) {
            // "".split(",") is [""]: an empty (or null) legend labels no dim
            String[] parts = legend == null || legend.isBlank() ? new String[0] : legend.split(",");
            StringBuilder sb = new StringBuilder("shape [");
            for (int i = 0; i < expected.length; i++) {
                if (i > 0) {
                    sb.append(", ");
                }
                String label = i < parts.length && !parts[i].isBlank() ? parts[i].trim() + "=" : "";
                sb.append(label).append(expected[i] < 0 ? "*" : String.valueOf(expected[i]));
            }
            throw new ArgumentException(name, sb.append(']').toString(), Arrays.toString(s));
        }
    }

    /** Address alignment in bytes (device tensors). */
    public static void aligned(String name, Tensor t, int bytes) {
        if (t.device().isCuda() && t.address() % bytes != 0) {
            throw new ArgumentException(name, "a device address aligned to " + bytes + " bytes", "0x" + Long.toHexString(t.address()));
        }
    }

    /** The element count must fit 32-bit indexing used by the kernels. */
    public static void int32Indexable(String name, Tensor t) {
        if (t.numel() > Integer.MAX_VALUE) {
            throw new ArgumentException(name, "at most 2^31-1 elements (32-bit indexing)", t.numel() + " elements");
        }
    }

    /**
     * A grid-stride loop with a 32-bit index, {@code for (int i = tid; i < n; i += gridX·blockX)} with
     * {@code tid < gridX·blockX}, last tests {@code i = n - 1 + gridX·blockX}: that value must not wrap past
     * 2^31-1, or the index turns negative and the loop touches memory out of bounds. So {@code n + gridX·blockX}
     * must be at most 2^31-1 ({@code n}: the loop's bound, or the largest value any thread's index starts from or
     * reaches below it; {@code gridX·blockX}: the kernel's stride). Checked where the launch geometry is known,
     * before the launch.
     *
     * @param name   the argument whose size sets {@code n}
     * @param what   the loop, for the message (e.g. "elements of the scale_add loop")
     * @param n      the loop bound
     * @param gridX  blocks of the launch
     * @param blockX threads per block
     */
    public static void gridStrideIndexable(String name, String what, long n, long gridX, long blockX) {
        if (n < 0 || gridX < 1 || blockX < 1) {
            throw new IllegalArgumentException("gridStrideIndexable(" + name + "): n=" + n + ", gridX=" + gridX + ", blockX=" + blockX);
        }
        long stride = gridX * blockX;
        if (n > Integer.MAX_VALUE - stride) {
            throw new ArgumentException(name, "n + gridX·blockX <= 2^31-1 for 32-bit indexing (n: " + what + "; grid stride "
                    + gridX + "·" + blockX + " = " + stride + ", so n <= " + (Integer.MAX_VALUE - stride) + ")",
                    "n = " + n + " (n + stride = " + (n + stride) + ")");
        }
    }

    /**
     * {@code out}'s memory must not overlap {@code in}'s: device tensors by address ranges {@code [address, address +
     * span)}, host tensors by their byte ranges in the buffer they share (views of one root tensor; tensors over
     * different buffers never overlap). A null {@code in} is not checked. Run after the open and device checks.
     */
    public static void noOverlap(String outName, Tensor out, String inName, Tensor in) {
        noOverlap(outName, out, inName, in, false);
    }

    /**
     * As {@link #noOverlap(String, Tensor, String, Tensor)}, except that {@code out} may be exactly {@code in} (same
     * address, dtype, shape and strides): an in-place update, for kernels that read every element of {@code in}
     * before writing the element of {@code out} at the same index. Any other overlap is an error.
     */
    public static void noPartialOverlap(String outName, Tensor out, String inName, Tensor in) {
        noOverlap(outName, out, inName, in, true);
    }

    private static void noOverlap(String outName, Tensor out, String inName, Tensor in, boolean exactOk) {
        if (out == null || in == null || !out.overlaps(in)) {
            return;
        }
        long o0 = out.byteStart();
        long i0 = in.byteStart();
        if (exactOk && o0 == i0 && out.dtype() == in.dtype() && Arrays.equals(out.shape(), in.shape())
                && (Arrays.equals(out.strides(), in.strides()) || (out.isContiguous() && in.isContiguous()))) {
            return;
        }
        throw new ArgumentException(outName, "memory disjoint from " + inName + (exactOk ? " (or exactly " + inName + ", in place)" : ""),
                String.format(java.util.Locale.ROOT, "[0x%x, 0x%x) overlapping %s [0x%x, 0x%x)%s", o0, o0 + out.spanBytes(), inName, i0,
                        i0 + in.spanBytes(), out.device().isCpu() ? " (offsets in one host buffer)" : ""));
    }

    public static void positive(String name, long v) {
        if (v <= 0) {
            throw new ArgumentException(name, "a value >= 1", String.valueOf(v));
        }
    }

    public static <E extends Enum<E>> String list(EnumSet<E> set) {
        return set.stream().map(Enum::name).collect(Collectors.joining(", ", "{", "}"));
    }

    private static String join(int[] v) {
        return Arrays.stream(v).mapToObj(String::valueOf).collect(Collectors.joining(" or "));
    }
}
