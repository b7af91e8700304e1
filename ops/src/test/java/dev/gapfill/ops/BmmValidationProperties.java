package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.ops.reference.BmmReference;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Validation of {@link Bmm} and its CPU backend (the reference), on random shapes. Runs everywhere. */
class BmmValidationProperties {
    private static final DType[] DTYPES = {DType.F32, DType.F16, DType.BF16};

    /** Naive triple loop over logical indices, independent of BmmReference's indexing. */
    private static double naive(Tensor a, Tensor b, int bi, int i, int j, int k, boolean ta, boolean tb) {
        long m = ta ? a.dim(2) : a.dim(1);
        double s = 0;
        for (int kk = 0; kk < k; kk++) {
            double x = ta ? a.getDouble((bi * (long) k + kk) * m + i) : a.getDouble((bi * m + i) * k + kk);
            long n = b.rank() == 2 ? (tb ? b.dim(0) : b.dim(1)) : (tb ? b.dim(1) : b.dim(2));
            long bOff = b.rank() == 2 ? 0 : (long) bi * k * n;
            double y = tb ? b.getDouble(bOff + (long) j * k + kk) : b.getDouble(bOff + (long) kk * n + j);
            s += x * y;
        }
        return s;
    }

    @Property(tries = 60)
    void cpuBackendIsTheReference(@ForAll @IntRange(min = 1, max = 5) int batch, @ForAll @IntRange(min = 1, max = 19) int m,
                                  @ForAll @IntRange(min = 1, max = 19) int n, @ForAll @IntRange(min = 1, max = 19) int k,
                                  @ForAll @IntRange(min = 0, max = 2) int dt, @ForAll boolean ta, @ForAll boolean tb,
                                  @ForAll boolean shared, @ForAll long seed) {
        DType dtype = DTYPES[dt];
        Random rnd = new Random(seed);
        long[] aShape = ta ? new long[] {batch, k, m} : new long[] {batch, m, k};
        long[] bInner = tb ? new long[] {n, k} : new long[] {k, n};
        long[] bShape = shared ? bInner : new long[] {batch, bInner[0], bInner[1]};
        Bmm.Options o = Bmm.Options.defaults().transposes(ta, tb);
        try (Tensor a = Poison.random(Device.CPU, dtype, rnd, aShape); Tensor b = Poison.random(Device.CPU, dtype, rnd, bShape);
             Tensor c = Bmm.bmm(a, b, o); Tensor given = Poison.poisoned(Device.CPU, dtype, batch, m, n)) {
            assertEquals(Decision.reference(), Bmm.decide(a, b, o));
            Bmm.bmm(a, b, given, o, null);
            BmmReference.Result r = BmmReference.exact(a, b, ta, tb);
            for (int bi = 0; bi < batch; bi++) {
                for (int i = 0; i < m; i++) {
                    for (int j = 0; j < n; j++) {
                        int idx = (bi * m + i) * n + j;
                        double exact = naive(a, b, bi, i, j, k, ta, tb);
                        assertEquals(exact, r.exact()[idx], 1e-12 * Math.max(1, r.absSum()[idx]));
                        assertTrue(r.absSum()[idx] >= Math.abs(r.exact()[idx]));
                        // one rounding of the fp64 value to the dtype
                        try (Tensor one = Tensor.empty(Device.CPU, dtype, 1)) {
                            one.setDouble(0, r.exact()[idx]);
                            assertEquals(one.getDouble(0), c.getDouble(idx), "element " + idx);
                            assertEquals(one.getDouble(0), given.getDouble(idx), "caller-supplied output, element " + idx);
                        }
                    }
                }
            }
        }
    }

    @Property(tries = 30)
    void sequentialFmaIsCloseToTheExactSum(@ForAll @IntRange(min = 1, max = 64) int k, @ForAll long seed) {
        Random rnd = new Random(seed);
        try (Tensor a = Poison.random(Device.CPU, DType.F32, rnd, 2, 3, k); Tensor b = Poison.random(Device.CPU, DType.F32, rnd, k, 5)) {
            BmmReference.Result r = BmmReference.exact(a, b, false, false);
            double[] seq = BmmReference.sequentialFmaF32(a, b, false, false);
            double gamma = k * 0x1p-24 / (1 - k * 0x1p-24);
            for (int i = 0; i < seq.length; i++) {
                assertEquals((float) seq[i], seq[i], 0.0, "a float value");
                assertTrue(Math.abs(seq[i] - r.exact()[i]) <= gamma * r.absSum()[i] + Double.MIN_NORMAL, "element " + i);
            }
        }
    }

    @Property(tries = 40)
    void mismatchedReductionIsRejected(@ForAll @IntRange(min = 1, max = 9) int k, @ForAll @IntRange(min = 1, max = 9) int k2,
                                       @ForAll boolean shared) {
        if (k == k2) {
            return;
        }
        try (Tensor a = Tensor.empty(Device.CPU, DType.F16, 2, 3, k);
             Tensor b = shared ? Tensor.empty(Device.CPU, DType.F16, k2, 4) : Tensor.empty(Device.CPU, DType.F16, 2, k2, 4)) {
            ArgumentException e = assertThrows(ArgumentException.class, () -> Bmm.bmm(a, b));
            assertEquals("b", e.argument());
            assertTrue(e.getMessage().contains("k=" + k), e.getMessage());
        }
    }

    @Test void batchMismatchOutputShapeDtypeRankAndClosedAreNamed() {
        try (Tensor a = Tensor.empty(Device.CPU, DType.F32, 2, 3, 4); Tensor b3 = Tensor.empty(Device.CPU, DType.F32, 3, 4, 5);
             Tensor bh = Tensor.empty(Device.CPU, DType.F16, 2, 4, 5); Tensor b = Tensor.empty(Device.CPU, DType.F32, 2, 4, 5);
             Tensor badOut = Tensor.empty(Device.CPU, DType.F32, 2, 5, 3); Tensor halfOut = Tensor.empty(Device.CPU, DType.F16, 2, 3, 5);
             Tensor a2 = Tensor.empty(Device.CPU, DType.F32, 3, 4); Tensor ints = Tensor.empty(Device.CPU, DType.I32, 2, 3, 4)) {
            assertEquals("b", assertThrows(ArgumentException.class, () -> Bmm.bmm(a, b3)).argument());
            assertEquals("b", assertThrows(ArgumentException.class, () -> Bmm.bmm(a, bh)).argument());
            assertEquals("a", assertThrows(ArgumentException.class, () -> Bmm.bmm(a2, b)).argument());
            assertEquals("a", assertThrows(ArgumentException.class, () -> Bmm.bmm(ints, b)).argument());
            assertEquals("out", assertThrows(ArgumentException.class, () -> Bmm.bmm(a, b, badOut, Bmm.Options.defaults(), null)).argument());
            assertEquals("out", assertThrows(ArgumentException.class, () -> Bmm.bmm(a, b, halfOut, Bmm.Options.defaults(), null)).argument());
            assertEquals("options", assertThrows(ArgumentException.class, () -> Bmm.bmm(a, b, null)).argument());
            // transposing A makes it [batch, k=3, m=4]: k no longer matches b
            assertEquals("b", assertThrows(ArgumentException.class, () -> Bmm.bmm(a, b, Bmm.Options.defaults().transposeA())).argument());
        }
        Tensor a = Tensor.empty(Device.CPU, DType.F32, 1, 2, 2);
        Tensor b = Tensor.empty(Device.CPU, DType.F32, 1, 2, 2);
        b.close();
        assertEquals("b", assertThrows(ArgumentException.class, () -> Bmm.bmm(a, b)).argument());
        a.close();
    }

    @Test void tf32IsAnF32SettingAndNullsAreRejected() {
        try (Tensor a = Tensor.empty(Device.CPU, DType.BF16, 1, 2, 2); Tensor b = Tensor.empty(Device.CPU, DType.BF16, 1, 2, 2)) {
            assertEquals("options.precision", assertThrows(ArgumentException.class, () -> Bmm.bmm(a, b, Bmm.Options.defaults().tf32())).argument());
        }
        assertEquals("options.backend", assertThrows(ArgumentException.class, () -> Bmm.Options.defaults().backend(null)).argument());
        assertEquals("options.precision", assertThrows(ArgumentException.class, () -> Bmm.Options.defaults().precision(null)).argument());
    }

    @Test void nonContiguousInputsAreRejected() {
        try (Tensor base = Tensor.empty(Device.CPU, DType.F32, 2, 4, 4); Tensor b = Tensor.empty(Device.CPU, DType.F32, 2, 2, 3)) {
            Tensor view = base.strided(new long[] {2, 2, 2}, new long[] {16, 4, 2}, 0);
            assertEquals("a", assertThrows(ArgumentException.class, () -> Bmm.bmm(view, b)).argument());
        }
    }

    @Test void tf32F32OnTheCpuIsStillTheExactReference() {
        try (Tensor a = Tensor.of(Device.CPU, DType.F32, new float[] {1.0000001f, 2, 3, 4}, 1, 2, 2);
             Tensor b = Tensor.of(Device.CPU, DType.F32, new float[] {1, 0, 0, 1}, 2, 2);
             Tensor c = Bmm.bmm(a, b, Bmm.Options.defaults().tf32())) {
            assertEquals(1.0000001f, (float) c.getDouble(0));
        }
    }
}
