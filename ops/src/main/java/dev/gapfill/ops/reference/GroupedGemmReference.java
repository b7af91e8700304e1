package dev.gapfill.ops.reference;

import dev.gapfill.core.DType;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.GroupedGemm;

import java.util.stream.IntStream;

/**
 * CPU reference of {@link GroupedGemm}: fp64 accumulation, epilogue (row scale, SwiGLU) in fp64, one
 * rounding to the output dtype. Also the source of per-element error magnitudes for the GPU paths' bounds.
 */
public final class GroupedGemmReference {
    private GroupedGemmReference() {}

    /** Unit roundoff of fp32, the GPU paths' accumulation and epilogue precision. */
    private static final double U32 = 0x1p-24;

    /**
     * The exact result of one grouped GEMM and what its error bounds need.
     *
     * @param rows    T_total
     * @param n       columns of W
     * @param swiglu  SwiGLU epilogue (output n/2 columns)
     * @param value   exact outputs, [rows, nOut] row-major
     * @param acc     exact GEMM values before the epilogue, [rows, n]
     * @param absSum  Σ_k |x·w| per GEMM value, [rows, n]
     * @param scale   per-row scale, or null
     */
    public record Result(int rows, int n, boolean swiglu, double[] value, double[] acc, double[] absSum, double[] scale) {
        public int nOut() { return swiglu ? n / 2 : n; }

        /**
         * Per-element magnitudes for {@code Verifier.compare(out, value(), errorScale(...), tol, ...)} with
         * {@code tol = Tolerance.accumulation(out, K, growth)}, whose bound is {@code u_out·|ref| + accTerm·scale}.
         * Assumes each GEMM value a is computed with |â − a| ≤ accTerm·Σ|x·w| (the accumulation contract), then
         * the fp32 epilogue, then one rounding. The returned scale is the absolute bound of everything but the
         * final rounding, divided by accTerm:
         * <ul>
         *   <li>no epilogue: Σ|x·w| (exactly the accumulation tolerance);</li>
         *   <li>row scale s: |s|·E_a + 2·u32·|v| (the fp32 product);</li>
         *   <li>SwiGLU with gate g, up u: |s|·(|silu(g)|·E_u + 1.1·|u|·E_g + 1.1·E_g·E_u) + 10·u32·|v|, where
         *       E = accTerm·Σ|x·w| bounds each accumulation and 1.1 ≥ max|silu'| (≈ 1.0998), and 10·u32 covers the
         *       epilogue's fp32 operations (expf ≤ 2 ulp, add, divide, two multiplies);</li>
         *   <li>{@code roundedIntermediate} (the grouped-batched vendor path rounds a to the dtype first):
         *       E_a = accTerm·Σ|x·w|·(1 + u_out) + u_out·|a| + h_out, h_out half the dtype's subnormal spacing (that
         *       rounding's absolute part in the gradual-underflow range: 2^-25 F16, 2^-134 BF16, 2^-150 F32).</li>
         * </ul>
         * The final rounding's absolute part h_out is not in the scale: {@code Verifier.compare} adds it once to every
         * accumulation bound ({@code Verifier.subnormalHalfSpacing}).
         */
        public double[] errorScale(double accTerm, DType out, boolean roundedIntermediate) {
            int no = nOut();
            double uo = out.unitRoundoff();
            double sub = out.subnormalHalfSpacing();
            double[] sc = new double[rows * no];
            for (int r = 0; r < rows; r++) {
                double s = scale == null ? 1.0 : scale[r];
                for (int j = 0; j < no; j++) {
                    int o = r * no + j;
                    double v = Math.abs(value[o]);
                    double b;
                    if (!swiglu) {
                        double ea = err(r * n + j, accTerm, uo, sub, roundedIntermediate);
                        b = scale == null && !roundedIntermediate ? ea : Math.abs(s) * ea + 2 * U32 * v;
                    } else {
                        int gi = r * n + j;
                        int ui = r * n + no + j;
                        double g = acc[gi];
                        double u = acc[ui];
                        double eg = err(gi, accTerm, uo, sub, roundedIntermediate);
                        double eu = err(ui, accTerm, uo, sub, roundedIntermediate);
                        b = Math.abs(s) * (Math.abs(silu(g)) * eu + 1.1 * Math.abs(u) * eg + 1.1 * eg * eu) + 10 * U32 * v;
                    }
                    sc[o] = b / accTerm;
                }
            }
            return sc;
        }

        private double err(int i, double accTerm, double uo, double sub, boolean rounded) {
            double e = accTerm * absSum[i];
            return rounded ? e * (1 + uo) + uo * Math.abs(acc[i]) + sub : e;
        }
    }


    static double silu(double x) { return x / (1 + Math.exp(-x)); }

    /**
     * The exact grouped GEMM on host data.
     *
     * @param x        CPU tensor [T_x, K]
     * @param w        CPU tensor [G, K, N] (KN) or [G, N, K] (NK)
     * @param offsets  group row offsets, length G + 1 (validated: monotonic from 0 to T_total)
     * @param layout   weight layout
     * @param gather   row index into x per grouped row, or null
     * @param swiglu   SwiGLU epilogue
     * @param scale    per-row scale, or null
     */
    public static Result compute(Tensor x, Tensor w, int[] offsets, GroupedGemm.WeightLayout layout, int[] gather, boolean swiglu,
                                 double[] scale) {
        int k = (int) x.dim(1);
        int xRows = (int) x.dim(0);
        int groups = (int) w.dim(0);
        int n = (int) (layout == GroupedGemm.WeightLayout.KN ? w.dim(2) : w.dim(1));
        int rows = gather != null ? gather.length : xRows;
        GroupedGemm.checkOffsets(offsets, rows);
        double[] xs = values(x);
        double[] ws = values(w);
        double[] acc = new double[rows * n];
        double[] abs = new double[rows * n];
        int[] groupOf = new int[rows];
        java.util.Arrays.fill(groupOf, -1);
        for (int g = 0; g < groups; g++) {
            for (int r = offsets[g]; r < offsets[g + 1]; r++) {
                groupOf[r] = g;
            }
        }
        // rows are independent (each writes only its own acc/abs row, summing over k in the same order): run them in parallel
        IntStream.range(0, rows).parallel().forEach(r -> {
            long wBase = (long) groupOf[r] * k * n;
            int src = gather != null ? gather[r] : r;
            if (groupOf[r] < 0 || src < 0 || src >= xRows) {
                return;  // reads zeros, as the GPU paths do
            }
            for (int kk = 0; kk < k; kk++) {
                double xv = xs[src * k + kk];
                for (int c = 0; c < n; c++) {
                    double wv = layout == GroupedGemm.WeightLayout.KN ? ws[(int) (wBase + (long) kk * n + c)]
                            : ws[(int) (wBase + (long) c * k + kk)];
                    double p = xv * wv;
                    acc[r * n + c] += p;
                    abs[r * n + c] += Math.abs(p);
                }
            }
        });
        int no = swiglu ? n / 2 : n;
        double[] value = new double[rows * no];
        for (int r = 0; r < rows; r++) {
            double s = scale == null ? 1.0 : scale[r];
            for (int j = 0; j < no; j++) {
                value[r * no + j] = swiglu ? s * silu(acc[r * n + j]) * acc[r * n + no + j] : s * acc[r * n + j];
            }
        }
        return new Result(rows, n, swiglu, value, acc, abs, scale);
    }

    /** The CPU backend of {@link GroupedGemm#run}: every tensor on the CPU, already validated. */
    public static void run(Tensor x, Tensor w, Tensor offsets, GroupedGemm.Options o, Tensor out) {
        int[] gather = o.gather() == null ? null : ints(o.gather());
        double[] scale = o.rowScale() == null ? null : values(o.rowScale());
        Result res = compute(x, w, ints(offsets), o.layout(), gather, o.swiglu(), scale);
        for (int i = 0; i < res.value().length; i++) {
            out.setDouble(i, res.value()[i]);
        }
    }

    private static double[] values(Tensor t) {
        return t.toDoubleArray();  // one copy of a contiguous tensor; views element by element
    }

    private static int[] ints(Tensor t) {
        int[] v = new int[(int) t.numel()];
        for (int i = 0; i < v.length; i++) {
            v[i] = (int) t.getDouble(i);
        }
        return v;
    }
}
