package dev.gapfill.ops.reference;

import dev.gapfill.core.Tensor;

import java.util.stream.IntStream;

/**
 * CPU reference of {@link dev.gapfill.ops.Bmm}: {@code C[b] = op(A[b]) · op(B[b])} with products and
 * sums in fp64 and one rounding to the output dtype. Also gives, per element, the sum of absolute
 * terms Σ|a·b| that scales the accumulation tolerance, and a sequential-fmaf emulation of the
 * custom F32 kernel's fixed k order for bit-exact checks.
 *
 * <p>Layouts as in {@code Bmm}: A {@code [batch, m, k]} ({@code [batch, k, m]} transposed), B
 * {@code [batch, k, n]} or shared {@code [k, n]} ({@code [.., n, k]} transposed). Inputs are CPU tensors
 * (any strides); F16/BF16/F32 values widen exactly to double.
 */
public final class BmmReference {
    private BmmReference() {}

    /** The exact result (fp64 sums) and Σ|a·b| per element, both row-major {@code [batch, m, n]}. */
    public record Result(double[] exact, double[] absSum) {}

    /** Writes the reference into {@code out} (a CPU tensor {@code [batch, m, n]}), rounding once to its dtype. */
    public static void compute(Tensor a, Tensor b, Tensor out, boolean transA, boolean transB) {
        Result r = exact(a, b, transA, transB);
        for (int i = 0; i < r.exact.length; i++) {
            out.setDouble(i, r.exact[i]);
        }
    }

    /** fp64 result and Σ|terms| for CPU tensors {@code a}, {@code b}. */
    public static Result exact(Tensor a, Tensor b, boolean transA, boolean transB) {
        Dims d = dims(a, b, transA, transB);
        double[] av = values(a);
        double[] bv = values(b);
        double[] exact = new double[Math.toIntExact(d.batch * d.m * d.n)];
        double[] abs = new double[exact.length];
        // matrices are independent and each writes only its own slice: the batch runs in parallel, the result is the
        // same as a sequential loop (every element is one fixed-order sum)
        IntStream.range(0, d.batch).parallel().forEach(bi -> {
            double[] arow = new double[d.k];
            long aOff = (long) bi * d.m * d.k;
            long bOff = d.shared ? 0 : (long) bi * d.k * d.n;
            for (int i = 0; i < d.m; i++) {
                for (int kk = 0; kk < d.k; kk++) {
                    arow[kk] = av[(int) (aOff + (transA ? (long) kk * d.m + i : (long) i * d.k + kk))];
                }
                for (int j = 0; j < d.n; j++) {
                    double s = 0;
                    double sa = 0;
                    for (int kk = 0; kk < d.k; kk++) {
                        double p = arow[kk] * bv[(int) (bOff + (transB ? (long) j * d.k + kk : (long) kk * d.n + j))];
                        s += p;
                        sa += Math.abs(p);
                    }
                    int o = (int) (((long) bi * d.m + i) * d.n + j);
                    exact[o] = s;
                    abs[o] = sa;
                }
            }
        });
        return new Result(exact, abs);
    }

    /**
     * F32 only: the value of {@code acc = fmaf(a[i][kk], b[kk][j], acc)} for kk = 0, 1, ..., k-1 from
     * acc = 0, in float, per element, as float bits widened to double. This is the custom FFMA kernel's
     * defined summation order, so its output must equal this bit for bit.
     */
    public static double[] sequentialFmaF32(Tensor a, Tensor b, boolean transA, boolean transB) {
        Dims d = dims(a, b, transA, transB);
        double[] av = values(a);
        double[] bv = values(b);
        double[] out = new double[Math.toIntExact(d.batch * d.m * d.n)];
        IntStream.range(0, d.batch).parallel().forEach(bi -> {
            long aOff = (long) bi * d.m * d.k;
            long bOff = d.shared ? 0 : (long) bi * d.k * d.n;
            for (int i = 0; i < d.m; i++) {
                for (int j = 0; j < d.n; j++) {
                    float acc = 0f;
                    for (int kk = 0; kk < d.k; kk++) {
                        float x = (float) av[(int) (aOff + (transA ? (long) kk * d.m + i : (long) i * d.k + kk))];
                        float y = (float) bv[(int) (bOff + (transB ? (long) j * d.k + kk : (long) kk * d.n + j))];
                        acc = Math.fma(x, y, acc);
                    }
                    out[(int) (((long) bi * d.m + i) * d.n + j)] = acc;
                }
            }
        });
        return out;
    }

    private record Dims(int batch, int m, int n, int k, boolean shared) {}

    private static Dims dims(Tensor a, Tensor b, boolean transA, boolean transB) {
        int batch = (int) a.dim(0);
        int m = (int) (transA ? a.dim(2) : a.dim(1));
        int k = (int) (transA ? a.dim(1) : a.dim(2));
        boolean shared = b.rank() == 2;
        int n = (int) (transB ? b.dim(shared ? 0 : 1) : b.dim(shared ? 1 : 2));
        return new Dims(batch, m, n, k, shared);
    }

    private static double[] values(Tensor t) {
        return t.toDoubleArray();  // one copy of a contiguous tensor; views element by element
    }
}
