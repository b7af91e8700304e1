package dev.gapfill.core.testing;

/**
 * One slice of a GPU test's fixed case grid, for runs that split the grid across processes: with
 * {@code -Dgapfill.test.slice=i/n} (0 &le; i &lt; n) a grid keeps the cases whose index is {@code i} modulo {@code n},
 * so n processes with i = 0..n-1 run every case exactly once between them, and a grid ordered from cheap to costly
 * spreads its costly tail across the slices. For compute-sanitizer runs where one process cannot get through a grid
 * within a call's time limit (Int8MmGpuTest's 72 shapes under racecheck). Unset (the default, and every recorded test
 * run), every case is kept. Only the grids that call {@link #keeps} are sliced; the class's other tests run in every
 * slice.
 */
public final class GpuTestSlice {
    static final String PROPERTY = "gapfill.test.slice";

    private GpuTestSlice() {
    }

    /** Whether this process runs grid case {@code index} (0-based); an invalid property is an error naming it. */
    public static boolean keeps(int index) {
        return keeps(index, System.getProperty(PROPERTY));
    }

    static boolean keeps(int index, String spec) {
        if (spec == null || spec.isBlank()) {
            return true;
        }
        String[] parts = spec.trim().split("/", -1);
        int i;
        int n;
        try {
            if (parts.length != 2) {
                throw new NumberFormatException("not i/n");
            }
            i = Integer.parseInt(parts[0].trim());
            n = Integer.parseInt(parts[1].trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(PROPERTY + ": expected i/n with 0 <= i < n, got '" + spec + "'", e);
        }
        if (n < 1 || i < 0 || i >= n) {
            throw new IllegalArgumentException(PROPERTY + ": expected i/n with 0 <= i < n, got '" + spec + "'");
        }
        return index % n == i;
    }
}
