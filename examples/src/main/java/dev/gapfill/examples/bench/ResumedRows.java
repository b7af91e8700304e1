package dev.gapfill.examples.bench;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The rows of incomplete sweeps measured earlier at the same commit ({@code bench --resume}), by op, and the question a
 * resumable suite asks before each case: was it measured already?
 */
public final class ResumedRows {
    private final Map<String, List<BenchRow>> byOp = new HashMap<>();

    /** Keeps {@code rows} as the earlier rows of {@code op}. */
    public void put(String op, List<BenchRow> rows) {
        byOp.put(op, List.copyOf(rows));
    }

    /** The earlier rows of {@code op} (empty if none). */
    public List<BenchRow> rows(String op) {
        return byOp.getOrDefault(op, List.of());
    }

    /**
     * Whether an earlier row of {@code op} has this dtype and a shape holding every given key with the given value
     * ({@code done("bmm", "F16", "batch", 512, "m", 8)}); numbers compare by value (JSON gives them back as doubles), other
     * values by their text. Keys the row has beyond those given do not matter.
     */
    public boolean done(String op, String dtype, Object... keyValues) {
        if (keyValues.length % 2 != 0) {
            throw new IllegalArgumentException("key/value pairs expected, got " + keyValues.length + " items");
        }
        outer:
        for (BenchRow r : rows(op)) {
            if (!r.dtype().equals(dtype)) {
                continue;
            }
            for (int i = 0; i < keyValues.length; i += 2) {
                Object v = r.shape().get((String) keyValues[i]);
                if (v == null || !canonical(v).equals(canonical(keyValues[i + 1]))) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    private static String canonical(Object v) {
        if (v instanceof Number n) {
            double d = n.doubleValue();
            return d == Math.rint(d) && !Double.isInfinite(d) ? Long.toString((long) d) : Double.toString(d);
        }
        return String.valueOf(v);
    }
}
