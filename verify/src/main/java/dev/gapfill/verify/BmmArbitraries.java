package dev.gapfill.verify;

import dev.gapfill.core.ArgumentException;
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

    /**
     * A dimension in [1, max], a third of the time one of the edge sizes.
     *
     * @throws ArgumentException naming {@code max} where it is below 1 (the range [1, max] would be empty)
     */
    public static Arbitrary<Integer> dim(int max) {
        if (max < 1) {
            throw new ArgumentException("max", "a largest dimension >= 1", String.valueOf(max));
        }
        Arbitrary<Integer> edges = Arbitraries.of(1, 7, 8, 16, 17, 32, 33, 48, 64, 97, 128, 129).filter(d -> d <= max);
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(1, edges), net.jqwik.api.Tuple.of(2, Arbitraries.integers().between(1, max)));
    }

    /**
     * Problems with m, n, k ≤ maxDim, batch ≤ maxBatch and batch·m·n·k ≤ maxMacs (keeps a CPU reference affordable).
     * Where the drawn m·n·k alone exceeds maxMacs, k is lowered to fit (then n, then m), and batch to what is left.
     * Every operand (A, B, C) then holds at most min(maxMacs, maxBatch·maxDim²) elements, which must fit the 32-bit
     * indexing {@link Bmm} requires of each, so that every drawn shape is one Bmm accepts.
     *
     * @throws ArgumentException naming {@code maxDim}, {@code maxBatch} or {@code maxMacs} where it is below 1, or naming
     *                           {@code maxMacs} where min(maxMacs, maxBatch·maxDim²) exceeds 2^31-1 (an operand could
     *                           then be too large for Bmm)
     */
    public static Arbitrary<BmmShape> shapes(int maxDim, int maxBatch, long maxMacs) {
        positive("maxDim", maxDim);
        positive("maxBatch", maxBatch);
        positive("maxMacs", maxMacs);
        long perMatrix = (long) maxDim * maxDim;  // < 2^62
        long largestOperand = maxBatch > maxMacs / perMatrix ? maxMacs : Math.min(maxMacs, maxBatch * perMatrix);
        if (largestOperand > Integer.MAX_VALUE) {
            throw new ArgumentException("maxMacs", "bounds whose largest operand, min(maxMacs, maxBatch·maxDim²) elements, is at most "
                    + "2^31-1 (Bmm indexes A, B and C with 32 bits)", "maxMacs=" + maxMacs + ", maxBatch=" + maxBatch + ", maxDim=" + maxDim
                    + ": " + largestOperand + " elements");
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

    private static void positive(String argument, long v) {
        if (v < 1) {
            throw new ArgumentException(argument, "a value >= 1", String.valueOf(v));
        }
    }
}
