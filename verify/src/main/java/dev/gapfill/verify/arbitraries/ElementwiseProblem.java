package dev.gapfill.verify.arbitraries;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.Elementwise;
import dev.gapfill.verify.Tolerance;
import dev.gapfill.verify.Verdict;
import dev.gapfill.verify.Verifier;

import java.util.Random;

/**
 * One random problem of {@code out = alpha·a + beta·b}: run it on a device through the public API
 * and compare every element with the fp64 reference ({@link #check(Device)}). Neither coefficient may be 0: a zero
 * coefficient makes its operand irrelevant, so a kernel that ignores that operand would pass.
 *
 * @param dtype F32, F16 or BF16
 * @param n     elements of a, b and out (at least 1)
 * @param alpha coefficient of a: finite and non-zero
 * @param beta  coefficient of b: finite and non-zero
 * @param seed  seed of the random inputs (uniform in [−1, 1), never 0)
 * @throws ArgumentException naming {@code dtype}, {@code n}, {@code alpha} or {@code beta} where it is outside the above
 */
public record ElementwiseProblem(DType dtype, int n, float alpha, float beta, long seed) {
    public ElementwiseProblem {
        if (dtype != DType.F32 && dtype != DType.F16 && dtype != DType.BF16) {
            throw new ArgumentException("dtype", "F32, F16 or BF16", String.valueOf(dtype));
        }
        if (n < 1) {
            throw new ArgumentException("n", "a value >= 1", String.valueOf(n));
        }
        if (alpha == 0 || !Float.isFinite(alpha)) {
            throw new ArgumentException("alpha", "a finite non-zero coefficient (0 would make a irrelevant)", String.valueOf(alpha));
        }
        if (beta == 0 || !Float.isFinite(beta)) {
            throw new ArgumentException("beta", "a finite non-zero coefficient (0 would make b irrelevant)", String.valueOf(beta));
        }
    }

    /** Runs the problem on {@code device} (output poisoned first) and returns the verdict against the reference. */
    public Verdict check(Device device) {
        Random rnd = new Random(seed);
        float[] x = new float[n];
        float[] y = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = GapfillArbitraries.uniformNonZero(rnd, -1, 1);
            y[i] = GapfillArbitraries.uniformNonZero(rnd, -1, 1);
        }
        try (Tensor a = Tensor.of(device, dtype, x, n); Tensor b = Tensor.of(device, dtype, y, n);
             Tensor out = Tensor.empty(device, dtype, n); Tensor ha = a.to(Device.CPU); Tensor hb = b.to(Device.CPU)) {
            out.fillBytes(0xff);
            Elementwise.scaleAdd(a, b, alpha, beta, out, null);
            double[] exact = new double[n];
            double[] scale = new double[n];
            for (int i = 0; i < n; i++) {
                double p = alpha * ha.getDouble(i);
                double q = beta * hb.getDouble(i);
                exact[i] = p + q;
                scale[i] = Math.abs(p) + Math.abs(q);
            }
            return Verifier.compare(out, exact, scale, Tolerance.accumulation(dtype, 2, 1), "reference");
        }
    }
}
