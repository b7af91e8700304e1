package dev.gapfill.examples.demo;

import dev.gapfill.examples.bench.BenchRow;
import dev.gapfill.examples.bench.Timing;

import java.util.List;

/**
 * One layer at one shape: both compositions timed and checked.
 *
 * @param layer   {@code moe_layer} or {@code decode_step}
 * @param shape   the shape, as printed
 * @param vendor  the vendor composition's timing
 * @param gapfill the Gapfill composition's timing
 * @param checks  one {@link LayerCheck} per composition
 * @param target  the speedup the issue asks for on Hopper at this size
 * @param choice  what each composition ran (backends, variants, graph)
 * @param bench   the row of {@code demo.json} (null on the CPU, where nothing is written)
 */
public record DemoRow(String layer, String shape, Timing vendor, Timing gapfill, List<LayerCheck> checks, double target, String choice,
                      BenchRow bench) {
    public DemoRow {
        checks = List.copyOf(checks);
    }

    /** vendor median / Gapfill median. */
    public double speedup() {
        return vendor.medianUs() / gapfill.medianUs();
    }

    /** Every output of both compositions passed its check. */
    public boolean verified() {
        return checks.stream().allMatch(LayerCheck::pass);
    }

    /** The largest ulp distance of the layer output over both compositions. */
    public long maxUlp() {
        return checks.stream().mapToLong(LayerCheck::outputUlp).max().orElse(0);
    }

    /** The speedup reaches the target. */
    public boolean targetMet() {
        return speedup() >= target;
    }
}
