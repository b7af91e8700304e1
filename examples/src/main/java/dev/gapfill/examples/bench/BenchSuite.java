package dev.gapfill.examples.bench;

import java.util.List;

/** One op's benchmark sweep. Implementations check correctness of each case before timing it. */
public interface BenchSuite {
    /** Op name as used in the result file name: bmm, depthwise_conv3x3, int8_mm, grouped_gemm, gqa_decode. */
    String op();

    /** Runs the sweep ({@code ctx.quick()} selects a short subset for smoke runs). */
    List<BenchRow> run(BenchContext ctx);

    /**
     * Whether the sweep skips the cases {@link BenchContext#done} reports, so that {@code bench --resume} can continue an
     * incomplete sweep of the same commit instead of starting over.
     */
    default boolean resumable() { return false; }
}
