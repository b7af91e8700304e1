package dev.gapfill.verify.arbitraries;

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
 * and compare every element with the fp64 reference ({@link #check(Device)}).
 */
public record ElementwiseProblem(DType dtype, int n, float alpha, float beta, long seed) {
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
