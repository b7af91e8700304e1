package dev.gapfill.ops;

import dev.gapfill.core.DType;

/**
 * The problem of one {@link Bmm} call, as its heuristics see it: {@code C[b] = op(A[b]) · op(B[b])}
 * with op(A) {@code [m, k]}, op(B) {@code [k, n]}, C {@code [m, n]}, for b in [0, batch).
 *
 * @param dtype     input and output dtype (F16, BF16 or F32)
 * @param batch     number of matrices
 * @param m         rows of op(A) and C
 * @param n         columns of op(B) and C
 * @param k         reduction length
 * @param transA    A is stored as {@code [batch, k, m]}
 * @param transB    B is stored as {@code [.., n, k]}
 * @param sharedB   one B {@code [k, n]} (or {@code [n, k]}) for the whole batch
 * @param precision F32 arithmetic: exact fp32 or TF32 tensor cores (ignored for F16/BF16)
 */
public record BmmShape(DType dtype, long batch, long m, long n, long k, boolean transA, boolean transB, boolean sharedB,
                       Bmm.Precision precision) {

    /**
     * @throws dev.gapfill.core.ArgumentException naming the component where the dtype is not F16, BF16 or F32, a
     *         dimension is below 1, or the precision is null (the heuristics divided by a zero dimension; a read-only
     *         review, fiftieth session)
     */
    public BmmShape {
        if (dtype != DType.F16 && dtype != DType.BF16 && dtype != DType.F32) {
            throw new dev.gapfill.core.ArgumentException("dtype", "F16, BF16 or F32", String.valueOf(dtype));
        }
        String[] names = {"batch", "m", "n", "k"};
        long[] dims = {batch, m, n, k};
        for (int i = 0; i < 4; i++) {
            if (dims[i] < 1) {
                throw new dev.gapfill.core.ArgumentException(names[i], names[i] + " >= 1", String.valueOf(dims[i]));
            }
        }
        if (precision == null) {
            throw new dev.gapfill.core.ArgumentException("precision", "Bmm.Precision.EXACT or TF32", "null");
        }
    }

    /** Non-transposed, batched B, exact precision. */
    public static BmmShape of(DType dtype, long batch, long m, long n, long k) {
        return new BmmShape(dtype, batch, m, n, k, false, false, false, Bmm.Precision.EXACT);
    }

    public BmmShape withTransposes(boolean ta, boolean tb) {
        return new BmmShape(dtype, batch, m, n, k, ta, tb, sharedB, precision);
    }

    public BmmShape withSharedB(boolean shared) {
        return new BmmShape(dtype, batch, m, n, k, transA, transB, shared, precision);
    }

    /** Elements read and written at least once: A, B (once when shared) and C. */
    public long minBytes() {
        long b = sharedB ? 1 : batch;
        return (batch * m * k + b * k * n + batch * m * n) * dtype.bytes();
    }

    /** Multiply-adds times two. */
    public double flops() {
        return 2.0 * batch * m * n * k;
    }

    @Override public String toString() {
        return String.format("%s batch=%d m=%d n=%d k=%d%s%s%s%s", dtype, batch, m, n, k, transA ? " A^T" : "", transB ? " B^T" : "",
                sharedB ? " sharedB" : "", precision == Bmm.Precision.TF32 && dtype == DType.F32 ? " tf32" : "");
    }
}
