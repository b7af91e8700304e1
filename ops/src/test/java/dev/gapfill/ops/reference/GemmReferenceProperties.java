package dev.gapfill.ops.reference;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.GroupedGemm;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The bmm and grouped-GEMM references (which run their matrices and rows in parallel) against plain sequential loops
 * written here from the definitions: the same sums in the same order, so every value must be identical, bit for bit.
 */
class GemmReferenceProperties {
    private static float[] randomValues(Random rnd, int n) {
        float[] v = new float[n];
        for (int i = 0; i < v.length; i++) {
            v[i] = rnd.nextFloat() * 2 - 1;
        }
        return v;
    }

    @Property(tries = 60)
    void bmmMatchesSequentialLoops(@ForAll @IntRange(min = 1, max = 40) int batch, @ForAll @IntRange(min = 1, max = 19) int m,
                                   @ForAll @IntRange(min = 1, max = 19) int n, @ForAll @IntRange(min = 1, max = 23) int k,
                                   @ForAll boolean ta, @ForAll boolean tb, @ForAll boolean shared, @ForAll long seed) {
        Random rnd = new Random(seed);
        float[] av = randomValues(rnd, batch * m * k);
        float[] bv = randomValues(rnd, (shared ? 1 : batch) * k * n);
        long[] aShape = ta ? new long[] {batch, k, m} : new long[] {batch, m, k};
        long[] bInner = tb ? new long[] {n, k} : new long[] {k, n};
        long[] bShape = shared ? bInner : new long[] {batch, bInner[0], bInner[1]};
        try (Tensor a = Tensor.of(Device.CPU, DType.F32, av, aShape); Tensor b = Tensor.of(Device.CPU, DType.F32, bv, bShape)) {
            BmmReference.Result r = BmmReference.exact(a, b, ta, tb);
            double[] fma = BmmReference.sequentialFmaF32(a, b, ta, tb);
            double[] exact = new double[batch * m * n];
            double[] abs = new double[exact.length];
            double[] seq = new double[exact.length];
            for (int bi = 0; bi < batch; bi++) {
                int bOff = shared ? 0 : bi * k * n;
                for (int i = 0; i < m; i++) {
                    for (int j = 0; j < n; j++) {
                        double s = 0;
                        double sa = 0;
                        float acc = 0f;
                        for (int kk = 0; kk < k; kk++) {
                            float x = av[bi * m * k + (ta ? kk * m + i : i * k + kk)];
                            float y = bv[bOff + (tb ? j * k + kk : kk * n + j)];
                            double p = (double) x * y;
                            s += p;
                            sa += Math.abs(p);
                            acc = Math.fma(x, y, acc);
                        }
                        int o = (bi * m + i) * n + j;
                        exact[o] = s;
                        abs[o] = sa;
                        seq[o] = acc;
                    }
                }
            }
            assertArrayEquals(exact, r.exact());
            assertArrayEquals(abs, r.absSum());
            assertArrayEquals(seq, fma);
        }
    }

    @Property(tries = 60)
    void groupedGemmMatchesSequentialLoops(@ForAll @IntRange(min = 1, max = 6) int groups, @ForAll @IntRange(min = 0, max = 40) int rows,
                                           @ForAll @IntRange(min = 1, max = 24) int k, @ForAll @IntRange(min = 1, max = 12) int halfN,
                                           @ForAll boolean nk, @ForAll boolean gathered, @ForAll boolean swiglu, @ForAll boolean scaled,
                                           @ForAll long seed) {
        Random rnd = new Random(seed);
        int n = 2 * halfN;
        if (!gathered && rows == 0) {
            rows = 1;  // without a gather the rows are x's rows, and a tensor needs one (gathered, 0 rows is tried)
        }
        int xRows = gathered ? 1 + rnd.nextInt(20) : rows;
        float[] xv = randomValues(rnd, xRows * k);
        float[] wv = randomValues(rnd, groups * k * n);
        int[] offsets = new int[groups + 1];
        for (int g = 1; g < groups; g++) {
            offsets[g] = offsets[g - 1] + rnd.nextInt(rows - offsets[g - 1] + 1);  // empty groups happen
        }
        offsets[groups] = rows;
        int[] gather = null;
        if (gathered) {
            gather = new int[rows];
            for (int r = 0; r < rows; r++) {
                gather[r] = rnd.nextInt(8) == 0 ? -1 : rnd.nextInt(xRows);  // an index out of range reads zeros
            }
        }
        double[] scale = null;
        if (scaled) {
            scale = new double[rows];
            for (int r = 0; r < rows; r++) {
                scale[r] = rnd.nextDouble();
            }
        }
        GroupedGemm.WeightLayout layout = nk ? GroupedGemm.WeightLayout.NK : GroupedGemm.WeightLayout.KN;
        long[] wShape = nk ? new long[] {groups, n, k} : new long[] {groups, k, n};
        try (Tensor x = Tensor.of(Device.CPU, DType.F32, xv, xRows, k); Tensor w = Tensor.of(Device.CPU, DType.F32, wv, wShape)) {
            GroupedGemmReference.Result r = GroupedGemmReference.compute(x, w, offsets, layout, gather, swiglu, scale);
            double[] acc = new double[rows * n];
            double[] abs = new double[rows * n];
            for (int g = 0; g < groups; g++) {
                for (int row = offsets[g]; row < offsets[g + 1]; row++) {
                    int src = gather == null ? row : gather[row];
                    if (src < 0 || src >= xRows) {
                        continue;
                    }
                    for (int c = 0; c < n; c++) {
                        double s = 0;
                        double sa = 0;
                        for (int kk = 0; kk < k; kk++) {
                            double p = (double) xv[src * k + kk] * wv[g * k * n + (nk ? c * k + kk : kk * n + c)];
                            s += p;
                            sa += Math.abs(p);
                        }
                        acc[row * n + c] = s;
                        abs[row * n + c] = sa;
                    }
                }
            }
            assertEquals(rows, r.rows());
            assertArrayEquals(acc, r.acc());
            assertArrayEquals(abs, r.absSum());
            int no = swiglu ? halfN : n;
            double[] value = new double[rows * no];
            for (int row = 0; row < rows; row++) {
                double s = scale == null ? 1.0 : scale[row];
                for (int j = 0; j < no; j++) {
                    value[row * no + j] = swiglu ? s * GroupedGemmReference.silu(acc[row * n + j]) * acc[row * n + no + j] : s * acc[row * n + j];
                }
            }
            assertArrayEquals(value, r.value());
        }
    }
}
