package dev.gapfill.examples.demo;

import dev.gapfill.core.DeviceInfo;

import java.util.List;
import java.util.Locale;

/** The table {@code gapfill demo} prints: one line per (layer, shape), then what was checked and anything that failed. */
public final class DemoTable {
    private DemoTable() {}

    /**
     * The table.
     *
     * @param gpu the device the rows ran on, or null for the CPU reference backend (no speedup target applies)
     */
    public static String render(List<DemoRow> rows, DeviceInfo gpu) {
        StringBuilder sb = new StringBuilder();
        String head = String.format(Locale.ROOT, "%-11s  %-48s  %10s  %10s  %7s  %-18s  %s%n", "layer", "shape", "vendor µs", "Gapfill µs",
                "speedup", "verified", "target");
        sb.append(head).append("-".repeat(head.length() - 1)).append('\n');
        for (DemoRow r : rows) {
            sb.append(String.format(Locale.ROOT, "%-11s  %-48s  %10.1f  %10.1f  %6.2f×  %-18s  %s%n", r.layer(), r.shape(),
                    r.vendor().medianUs(), r.gapfill().medianUs(), r.speedup(), verified(r), target(r, gpu)));
        }
        sb.append('\n');
        for (DemoRow r : rows) {
            sb.append(r.layer()).append(' ').append(r.shape()).append(": ").append(r.choice()).append('\n');
            for (LayerCheck c : r.checks()) {
                sb.append(String.format(Locale.ROOT, "  %s: %s (out: max %d ulp), checked element by element against the fp64 reference: %s%n",
                        c.path(), c.pass() ? "pass" : "FAIL", c.outputUlp(), c.outputs()));
                c.failures().forEach(f -> sb.append("    ").append(f).append('\n'));
            }
        }
        return sb.toString();
    }

    /** "pass, max 3 ulp" or "FAIL". */
    static String verified(DemoRow r) {
        return r.verified() ? "pass, max " + r.maxUlp() + " ulp" : "FAIL";
    }

    /** Whether the speedup target holds; stated for Hopper, so another GPU's result is labelled as such. */
    public static String target(DemoRow r, DeviceInfo gpu) {
        String goal = String.format(Locale.ROOT, "≥%.0f×", r.target());
        if (gpu == null) {
            return goal + ": n/a (CPU reference backend)";
        }
        String verdict = r.targetMet() ? "met" : "NOT met";
        return goal + ": " + verdict + (gpu.ccMajor() == 9 ? "" : " (target stated for Hopper; this is sm_" + gpu.cc() + ")");
    }
}
