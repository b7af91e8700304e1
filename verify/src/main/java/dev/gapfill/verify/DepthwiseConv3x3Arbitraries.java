package dev.gapfill.verify;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.ops.DepthwiseConv3x3.Activation;
import dev.gapfill.ops.DepthwiseConv3x3.Layout;
import dev.gapfill.ops.DepthwiseConv3x3.Problem;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/**
 * jqwik arbitraries of {@link dev.gapfill.ops.DepthwiseConv3x3} problems for downstream property
 * tests: uneven sizes are favoured (1, 7, 17, 97 and non-multiples of every vector width and tile).
 */
public final class DepthwiseConv3x3Arbitraries {
    private DepthwiseConv3x3Arbitraries() {}

    /**
     * Spatial sizes: the edge cases first, then anything up to {@code max}.
     *
     * @throws ArgumentException naming {@code max} where it is below 1
     */
    public static Arbitrary<Integer> spatial(int max) {
        positive("max", max);
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(3, Arbitraries.of(1, 2, 3, 7, 8, 9, 17, 97).filter(v -> v <= max)),
                net.jqwik.api.Tuple.of(2, Arbitraries.integers().between(1, max)));
    }

    /**
     * Channel counts: 1, 3, 8, 13, 64 and others up to {@code max}.
     *
     * @throws ArgumentException naming {@code max} where it is below 1
     */
    public static Arbitrary<Integer> channels(int max) {
        positive("max", max);
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(3, Arbitraries.of(1, 3, 4, 8, 13, 16, 64).filter(v -> v <= max)),
                net.jqwik.api.Tuple.of(2, Arbitraries.integers().between(1, max)));
    }

    /**
     * Problems with at most {@code maxElements} input elements: N ≤ 3, C ≤ 70, H, W ≤ 100 as drawn by {@link #channels}
     * and {@link #spatial}. A draw within the budget is kept as it is; where N·C·H·W exceeds it, W is lowered to fit
     * (then H, then C, and N below a budget of 3), so every budget ≥ 1 yields problems (a filter on the budget would run
     * dry for small ones).
     *
     * @throws ArgumentException naming {@code maxElements} where it is below 1
     */
    public static Arbitrary<Problem> problems(long maxElements) {
        positive("maxElements", maxElements);
        Arbitrary<DType> dt = Arbitraries.of(DType.F32, DType.F16, DType.BF16);
        Arbitrary<Layout> layout = Arbitraries.of(Layout.class);
        Arbitrary<Activation> act = Arbitraries.of(Activation.class);
        Arbitrary<Integer> n = Arbitraries.integers().between(1, 3);
        Arbitrary<Integer> stride = Arbitraries.of(1, 2);
        Arbitrary<Boolean> flag = Arbitraries.of(true, false);
        return Combinators.combine(dt, layout, n, channels(70), spatial(100), spatial(100), stride, act)
                .flatAs((d, l, nn, c0, h0, w0, s, a) -> Combinators.combine(flag, flag).as((b, r) -> {
                    long nFit = Math.min(nn, maxElements);
                    long c = Math.min(c0, maxElements / nFit);
                    long h = Math.min(h0, maxElements / (nFit * c));
                    long w = Math.min(w0, maxElements / (nFit * c * h));  // ≥ 1: n·c·h ≤ maxElements by construction
                    return new Problem(d, l, (int) nFit, (int) c, (int) h, (int) w, s, a, b, r);
                }));
    }

    private static void positive(String argument, long v) {
        if (v < 1) {
            throw new ArgumentException(argument, "a value >= 1", String.valueOf(v));
        }
    }
}
