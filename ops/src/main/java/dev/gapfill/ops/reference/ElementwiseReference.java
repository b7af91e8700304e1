package dev.gapfill.ops.reference;

import dev.gapfill.core.Tensor;

/** CPU reference of {@link dev.gapfill.ops.Elementwise}: fp64 arithmetic, one rounding to the output dtype. */
public final class ElementwiseReference {
    private ElementwiseReference() {}

    public static void scaleAdd(Tensor a, Tensor b, double alpha, double beta, Tensor out) {
        long n = a.numel();
        for (long i = 0; i < n; i++) {
            out.setDouble(i, alpha * a.getDouble(i) + beta * b.getDouble(i));
        }
    }
}
