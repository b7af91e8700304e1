package dev.gapfill.verify;

import dev.gapfill.core.DType;
import dev.gapfill.ops.Bmm;
import dev.gapfill.ops.BmmShape;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/**
 * jqwik arbitraries of bmm problems, for downstream property tests of their own use of
 * {@link Bmm}: sizes that favour the edges (1, 7, 17, 97, multiples and non-multiples of 16, the
 * custom kernels' limit 128 and one past it), every dtype, both transposes, shared B.
 */
public final class BmmArbitraries {
    private BmmArbitraries() {}

    /** A dimension in [1, max], a third of the time one of the edge sizes. */
    public static Arbitrary<Integer> dim(int max) {
        Arbitrary<Integer> edges = Arbitraries.of(1, 7, 8, 16, 17, 32, 33, 48, 64, 97, 128, 129).filter(d -> d <= max);
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(1, edges), net.jqwik.api.Tuple.of(2, Arbitraries.integers().between(1, max)));
    }

    /**
     * Problems with m, n, k ≤ maxDim, batch ≤ maxBatch and batch·m·n·k ≤ maxMacs (keeps a CPU reference affordable).
     * Where the drawn m·n·k alone exceeds maxMacs, k is lowered to fit (then n, then m), and batch to what is left.
     *
     * @throws IllegalArgumentException where maxDim, maxBatch or maxMacs is below 1
     */
    public static Arbitrary<BmmShape> shapes(int maxDim, int maxBatch, long maxMacs) {
        if (maxDim < 1 || maxBatch < 1 || maxMacs < 1) {
            throw new IllegalArgumentException("maxDim, maxBatch and maxMacs must be >= 1, got " + maxDim + ", " + maxBatch + ", " + maxMacs);
        }
        Arbitrary<DType> dt = Arbitraries.of(DType.F16, DType.BF16, DType.F32);
        Arbitrary<Boolean> flag = Arbitraries.of(false, true);
        return Combinators.combine(dt, dim(maxDim), dim(maxDim), dim(maxDim), Arbitraries.integers().between(1, maxBatch), flag, flag,
                Arbitraries.integers().between(0, 3)).as((t, m0, n0, k0, batch, ta, tb, s) -> {
                    long m = Math.min(m0, maxMacs);
                    long n = Math.min(n0, maxMacs / m);
                    long k = Math.min(k0, maxMacs / (m * n));
                    long b = Math.min(batch, maxMacs / (m * n * k));  // ≥ 1: m·n·k ≤ maxMacs by construction
                    return new BmmShape(t, b, m, n, k, ta, tb, s == 0, Bmm.Precision.EXACT);
                });
    }
}
