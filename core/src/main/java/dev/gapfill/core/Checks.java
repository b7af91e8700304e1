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
            String[] parts = legend.split(",");
            StringBuilder sb = new StringBuilder("shape [");
            for (int i = 0; i < expected.length; i++) {
                if (i > 0) {
                    sb.append(", ");
                }
                String label = i < parts.length ? parts[i].trim() + "=" : "";
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
