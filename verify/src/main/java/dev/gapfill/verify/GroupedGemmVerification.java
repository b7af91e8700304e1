package dev.gapfill.verify;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.GroupedGemm;
import dev.gapfill.ops.reference.GroupedGemmReference;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/**
 * The grouped GEMM's verification policy as API: {@link #verify} compares any result with the fp64 reference
 * ({@code Tolerance.accumulation(dtype, K, 2)} carried through the SwiGLU / row-scale epilogue by
 * {@link GroupedGemmReference.Result#errorScale}); {@link #problems()} generates MoE-like problem descriptions
 * for downstream property tests.
 */
public final class GroupedGemmVerification {
    private GroupedGemmVerification() {}

    /**
     * A random grouped GEMM problem: G groups over T_total rows, K, N, and the options; {@link #offsets()} realises its
     * routing from {@code seed} (about a third of the groups empty), and the caller draws the data from the same seed.
     */
    public record Problem(int groups, int rows, int k, int n, DType dtype, GroupedGemm.WeightLayout layout, boolean swiglu,
                          boolean gather, boolean rowScale, long seed) {
        /**
         * The group offsets, G + 1 of them (offsets[0] = 0, offsets[G] = rows, non-decreasing), drawn from {@code seed}:
         * where G &gt; 1 each group is empty with probability 1/3 (never all of them), and every row goes to one of the
         * others at random, so groups of zero, one and many rows all occur. The same seed gives the same offsets.
         */
        public int[] offsets() {
            java.util.Random r = new java.util.Random(seed);
            int[] live = new int[groups];
            int nLive = 0;
            for (int g = 0; g < groups; g++) {
                if (groups == 1 || r.nextInt(3) != 0) {
                    live[nLive++] = g;
                }
            }
            if (nLive == 0) {
                live[nLive++] = r.nextInt(groups);
            }
            int[] count = new int[groups];
            for (int i = 0; i < rows; i++) {
                count[live[r.nextInt(nLive)]]++;
            }
            int[] offsets = new int[groups + 1];
            for (int g = 0; g < groups; g++) {
                offsets[g + 1] = offsets[g] + count[g];
            }
            return offsets;
        }
    }

    /**
     * Problems the custom kernel takes (K % 8 == 0, N % 16 == 0), including G = 1, T_total = 1, K and N off the
     * 64-wide tiles; up to 16 groups, rows up to 300, K up to 256, N up to 256.
     */
    public static Arbitrary<Problem> problems() {
        return problems(16, 300, 256, 256);
    }

    /**
     * As {@link #problems()}, within these bounds: G in [1, maxGroups] (fine-grained mixtures of experts run 64 to 256,
     * the custom kernel takes up to {@value dev.gapfill.ops.GroupedGemmHeuristics#MAX_CUSTOM_GROUPS}), T_total in
     * [1, maxRows], K a multiple of 8 up to maxK, N a multiple of 16 up to maxN.
     *
     * @throws dev.gapfill.core.ArgumentException naming the bound that no problem the custom kernel takes can meet, or that
     *     could draw a problem past the op's 32-bit indexing (maxK·maxN, or (maxRows + 3)·max(maxK, maxN), 2^31 or more)
     */
    public static Arbitrary<Problem> problems(int maxGroups, int maxRows, int maxK, int maxN) {
        if (maxGroups < 1 || maxGroups > dev.gapfill.ops.GroupedGemmHeuristics.MAX_CUSTOM_GROUPS) {
            throw new dev.gapfill.core.ArgumentException("maxGroups", "1 to " + dev.gapfill.ops.GroupedGemmHeuristics.MAX_CUSTOM_GROUPS,
                    String.valueOf(maxGroups));
        }
        if (maxRows < 1) {
            throw new dev.gapfill.core.ArgumentException("maxRows", "at least 1", String.valueOf(maxRows));
        }
        if (maxK < 8) {
            throw new dev.gapfill.core.ArgumentException("maxK", "at least 8 (K is a multiple of 8)", String.valueOf(maxK));
        }
        if (maxN < 16) {
            throw new dev.gapfill.core.ArgumentException("maxN", "at least 16 (N is a multiple of 16)", String.valueOf(maxN));
        }
        // the op's 32-bit row indexing (GroupedGemm refuses T_x·K, T_total·K, T_total·N or K·N of 2^31 or more; a gathered
        // x has up to maxRows / 2 + 3 rows): bounds that could draw such a problem would fail a user's property for the
        // wrong reason (jqwik draws the range ends as edge cases)
        if ((long) maxK * maxN >= 1L << 31) {
            throw new dev.gapfill.core.ArgumentException("maxK", "maxK·maxN below 2^31 (the op's 32-bit indexing)", maxK + "·" + maxN);
        }
        if ((long) (maxRows + 3) * Math.max(maxK, maxN) >= 1L << 31) {
            throw new dev.gapfill.core.ArgumentException("maxRows", "(maxRows + 3)·max(maxK, maxN) below 2^31 (the op's 32-bit indexing)",
                    maxRows + "·" + Math.max(maxK, maxN));
        }
        Arbitrary<Integer> groups = Arbitraries.integers().between(1, maxGroups);
        Arbitrary<Integer> rows = Arbitraries.integers().between(1, maxRows);
        Arbitrary<Integer> k = Arbitraries.integers().between(1, maxK / 8).map(v -> 8 * v);
        Arbitrary<Integer> n = Arbitraries.integers().between(1, maxN / 16).map(v -> 16 * v);
        Arbitrary<DType> dt = Arbitraries.of(DType.F16, DType.BF16);
        Arbitrary<GroupedGemm.WeightLayout> layout = Arbitraries.of(GroupedGemm.WeightLayout.class);
        Arbitrary<Boolean> flag = Arbitraries.of(true, false);
        Arbitrary<Long> seed = Arbitraries.longs();
        return Combinators.combine(groups, rows, k, n, dt, layout, flag, flag).flatAs((g, r, kk, nn, d, l, sw, ga) ->
                Combinators.combine(flag, seed).as((sc, s) -> new Problem(g, r, kk, nn, d, l, sw, ga, sc, s)));
    }

    /**
     * Compares {@code out} (any device) with the reference of {@code GroupedGemm.run(x, w, offsets, o, out, ...)};
     * copies every input to the host (synchronises). The path {@code GroupedGemm.decide} names decides whether the
     * result was rounded to the dtype before its epilogue (the grouped-batched call with an epilogue).
     *
     * @throws dev.gapfill.core.ArgumentException naming the argument, as the op would, for invalid inputs, an {@code out}
     *         of another dtype or shape than the op's output, offsets that are not monotonic from 0 to T_total, or gather
     *         rows outside x
     */
    public static Verdict verify(Tensor x, Tensor w, Tensor offsets, GroupedGemm.Options o, Tensor out) {
        long[] shape = GroupedGemm.outputShape(x, w, offsets, o);  // the op's own validation, every argument named
        dev.gapfill.core.Checks.open("out", out);
        dev.gapfill.core.Checks.dtype("out", out, x.dtype());
        dev.gapfill.core.Checks.shape("out", out, "T_total, N", shape);
        try (Tensor hx = x.to(Device.CPU); Tensor hw = w.to(Device.CPU)) {
            int[] off = offsets.device().isCpu() ? ints(offsets) : offsets.toIntArray();
            GroupedGemm.checkOffsets(off, (int) shape[0]);  // the reference indexes rows by them
            int[] gather = o.gather() == null ? null : o.gather().device().isCpu() ? ints(o.gather()) : o.gather().toIntArray();
            if (gather != null) {
                for (int r = 0; r < gather.length; r++) {
                    if (gather[r] < 0 || gather[r] >= x.dim(0)) {
                        throw new dev.gapfill.core.ArgumentException("gather", "row indices in [0, " + x.dim(0) + ")",
                                "gather[" + r + "] = " + gather[r]);
                    }
                }
            }
            double[] scale = null;
            if (o.rowScale() != null) {
                float[] f = o.rowScale().toFloatArray();
                scale = new double[f.length];
                for (int i = 0; i < f.length; i++) {
                    scale[i] = f[i];
                }
            }
            GroupedGemmReference.Result ref = GroupedGemmReference.compute(hx, hw, off, o.layout(), gather, o.swiglu(), scale);
            boolean rounded = roundsBeforeEpilogue(x, w, offsets, o);
            Tolerance tol = Tolerance.accumulation(out.dtype(), hx.dim(1), 2);
            return Verifier.compare(out, ref.value(), ref.errorScale(tol.accTerm(), out.dtype(), rounded), tol, "reference");
        }
    }

    /**
     * Whether the path {@code GroupedGemm.decide} names for these arguments rounds the GEMM result to the dtype before
     * its epilogue: the grouped-batched vendor call with SwiGLU or a row scale (AUTO and VENDOR may pick it). The
     * reference's error scale then takes the extra rounding ({@link GroupedGemmReference.Result#errorScale}).
     */
    public static boolean roundsBeforeEpilogue(Tensor x, Tensor w, Tensor offsets, GroupedGemm.Options o) {
        return GroupedGemm.decide(x, w, offsets, o).variant().equals("cublas_grouped") && (o.swiglu() || o.rowScale() != null);
    }

    private static int[] ints(Tensor t) {
        int[] v = new int[(int) t.numel()];
        for (int i = 0; i < v.length; i++) {
            v[i] = (int) t.getDouble(i);
        }
        return v;
    }
}
