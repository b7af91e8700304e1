package dev.gapfill.examples.demo;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.Checks;
import dev.gapfill.core.DType;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.KernelArgs;
import dev.gapfill.core.KernelModule;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.OpStreams;
import dev.gapfill.verify.Tolerance;

import java.util.EnumSet;
import java.util.Locale;

/**
 * The last step of a MoE layer: the scatter-add of the expert-ordered rows back to their tokens.
 *
 * <p>{@code out[t, :] = Σ_{j<k} y[rowOf[t, j], :]}, the k terms added in the fixed order j = 0..k−1 (deterministic,
 * no atomics) and rounded once. Legend: T tokens, k choices per token, H hidden; y {@code [T·k, H]} (the down
 * projection, router weight already applied), rowOf I32 {@code [T, k]} (moeRoute's inverse map), out {@code [T, H]};
 * y and out F16 or BF16, every tensor contiguous and on one device.
 *
 * <p>GPU: {@code cuda-native/src/main/cuda/moe_route/combine.cu} (fp32 sum, one rounding; graph-capturable). CPU:
 * {@link #reference} in fp64, one rounding. Row indices outside [0, T·k) contribute zero on both.
 */
public final class MoeCombine {
    private static final KernelModule MODULE = KernelModule.of("moe_route/combine");
    private static final int THREADS = 256;

    private MoeCombine() {}

    /**
     * The exact sum and what its error bound scales with.
     *
     * @param value  Σ_j y[rowOf[t, j], c] in fp64, {@code [T, H]} row-major
     * @param absSum Σ_j |y[rowOf[t, j], c]|, the per-element scale of {@link #tolerance}
     */
    public record Exact(double[] value, double[] absSum) {}

    /** {@code out = Σ_j y[rowOf[:, j]]} on {@code stream} (null: the per-thread stream; ignored for CPU tensors). */
    public static void run(Tensor y, Tensor rowOf, Tensor out, Stream stream) {
        int[] dims = validate(y, rowOf, out);
        int tokens = dims[0];
        int k = dims[1];
        int hidden = dims[2];
        int rows = dims[3];
        if (y.device().isCpu()) {
            Exact e = reference(doubles(y), rowOf.toIntArray(), tokens, k, hidden);
            for (int i = 0; i < e.value().length; i++) {
                out.setDouble(i, e.value()[i]);
            }
            return;
        }
        Stream s = OpStreams.pick(y.device(), stream);
        String symbol = "moe_combine_" + y.dtype().name().toLowerCase(Locale.ROOT);
        MODULE.function(Gpu.device(y.device()), symbol).launch(s, tokens, (hidden + THREADS - 1) / THREADS, 1, THREADS, 1, 1, 0,
                KernelArgs.begin().ptr(y).ptr(rowOf).ptr(out).i32(k).i32(hidden).i32(rows));
        OpStreams.record(s, y, rowOf, out);
    }

    /**
     * The exact combine of host data: {@code y} {@code [rows, H]} row-major, {@code rowOf} {@code [T, k]}. Rows
     * outside [0, rows) contribute zero, as on the GPU.
     */
    public static Exact reference(double[] y, int[] rowOf, int tokens, int k, int hidden) {
        int rows = y.length / hidden;
        double[] value = new double[tokens * hidden];
        double[] abs = new double[tokens * hidden];
        for (int t = 0; t < tokens; t++) {
            for (int j = 0; j < k; j++) {
                int r = rowOf[t * k + j];
                if (r < 0 || r >= rows) {
                    continue;
                }
                for (int c = 0; c < hidden; c++) {
                    double v = y[r * hidden + c];
                    value[t * hidden + c] += v;
                    abs[t * hidden + c] += Math.abs(v);
                }
            }
        }
        return new Exact(value, abs);
    }

    /**
     * The bound of the GPU combine: k terms added in fp32 in a fixed order (γ_k·Σ|y|, growth 1: plain FADDs) and one
     * rounding to {@code out} (u_out·|ref|).
     */
    public static Tolerance tolerance(DType out, int k) {
        return Tolerance.accumulation(out, k, 1);
    }

    /** Validates and returns {T, k, H, rows of y}. */
    private static int[] validate(Tensor y, Tensor rowOf, Tensor out) {
        Checks.open("y", y);
        Checks.open("rowOf", rowOf);
        Checks.open("out", out);
        Checks.rank("y", y, 2);
        Checks.dtype("y", y, EnumSet.of(DType.F16, DType.BF16));
        Checks.contiguous("y", y);
        Checks.rank("rowOf", rowOf, 2);
        Checks.dtype("rowOf", rowOf, DType.I32);
        Checks.contiguous("rowOf", rowOf);
        Checks.sameDevice("rowOf", rowOf, y.device());
        long tokens = rowOf.dim(0);
        long k = rowOf.dim(1);
        long hidden = y.dim(1);
        Checks.shape("y", y, "T·k, H", tokens * k, hidden);
        Checks.dtype("out", out, y.dtype());
        Checks.contiguous("out", out);
        Checks.sameDevice("out", out, y.device());
        Checks.shape("out", out, "T, H", tokens, hidden);
        // block t writes out's row t while other blocks read any row of y through rowOf (combine.cu, __restrict__)
        Checks.noOverlap("out", out, "y", y);
        Checks.noOverlap("out", out, "rowOf", rowOf);
        if (y.numel() >= 1L << 31 || out.numel() >= 1L << 31) {
            throw new ArgumentException("y", "T·k·H below 2^31 (32-bit row indexing)", "T=" + tokens + " k=" + k + " H=" + hidden);
        }
        if ((hidden + THREADS - 1) / THREADS > 65535) {
            throw new ArgumentException("y", "H <= " + 65535L * THREADS + " (grid y limit)", "H=" + hidden);
        }
        return new int[] {(int) tokens, (int) k, (int) hidden, (int) y.dim(0)};
    }

    /** Elements of a float tensor on any device, widened exactly (copies to the host if needed). */
    static double[] doubles(Tensor t) {
        float[] f = t.toFloatArray();
        double[] v = new double[f.length];
        for (int i = 0; i < f.length; i++) {
            v[i] = f[i];
        }
        return v;
    }
}
