package dev.gapfill.verify;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.GroupedGemm;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The grouped GEMM verification API on the CPU: the reference backend passes, a perturbed result fails. */
class GroupedGemmVerificationProperties {
    @Provide Arbitrary<GroupedGemmVerification.Problem> small() {
        return GroupedGemmVerification.problems().filter(p -> (long) p.rows() * p.k() * p.n() <= 400_000);
    }

    @Property(tries = 15)
    void referenceBackendPassesAndAPerturbedElementFails(@ForAll("small") GroupedGemmVerification.Problem p) {
        Random rnd = new Random(p.seed());
        int xRows = p.gather() ? 1 + rnd.nextInt(p.rows() + 3) : p.rows();
        int[] off = new int[p.groups() + 1];
        for (int r = 0; r < p.rows(); r++) {
            off[1 + rnd.nextInt(Math.max(1, p.groups() - p.groups() / 3))]++;
        }
        for (int g = 0; g < p.groups(); g++) {
            off[g + 1] += off[g];
        }
        int[] gi = new int[p.rows()];
        float[] sc = new float[p.rows()];
        for (int r = 0; r < p.rows(); r++) {
            gi[r] = rnd.nextInt(xRows);
            sc[r] = rnd.nextFloat() * 2 - 1;
        }
        long[] ws = p.layout() == GroupedGemm.WeightLayout.KN ? new long[] {p.groups(), p.k(), p.n()} : new long[] {p.groups(), p.n(), p.k()};
        try (Tensor x = rand(rnd, p.dtype(), xRows, p.k()); Tensor w = rand(rnd, p.dtype(), ws);
             Tensor o = Tensor.ofInts(Device.CPU, off, p.groups() + 1); Tensor g = Tensor.ofInts(Device.CPU, gi, p.rows());
             Tensor s = Tensor.of(Device.CPU, DType.F32, sc, p.rows())) {
            GroupedGemm.Options opt = GroupedGemm.Options.builder().layout(p.layout()).swiglu(p.swiglu())
                    .gather(p.gather() ? g : null).rowScale(p.rowScale() ? s : null).build();
            try (Tensor y = GroupedGemm.run(x, w, o, opt)) {
                Verdict v = GroupedGemmVerification.verify(x, w, o, opt, y);
                assertTrue(v.pass() && v.bitExact(), v.toString());
                int i = rnd.nextInt((int) y.numel());
                double old = y.getDouble(i);
                y.setDouble(i, old == 0 ? 1 : old * 1.5 + Math.copySign(0.25, old));
                assertFalse(GroupedGemmVerification.verify(x, w, o, opt, y).pass());
            }
        }
    }

    private static Tensor rand(Random rnd, DType dt, long... shape) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        float[] f = new float[(int) n];
        for (int i = 0; i < f.length; i++) {
            f[i] = rnd.nextFloat() * 2 - 1;
        }
        return Tensor.of(Device.CPU, dt, f, shape);
    }
}
