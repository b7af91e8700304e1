package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.GroupedGemm.Options;
import dev.gapfill.ops.GroupedGemm.WeightLayout;
import dev.gapfill.ops.reference.GroupedGemmReference;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The grouped GEMM's CPU reference (properties against independent formulations) and its validation. */
class GroupedGemmValidationProperties {

    static Tensor random(DType dt, Random rnd, long... shape) {
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

    /** Random offsets over {@code rows} rows with about a third of the groups empty. */
    static int[] offsets(Random rnd, int groups, int rows) {
        int[] cnt = new int[groups];
        for (int r = 0; r < rows; r++) {
            int g = rnd.nextInt(groups);
            if (groups > 2 && g % 3 == 1) {
                g = (g + 1) % groups;
            }
            cnt[g]++;
        }
        int[] off = new int[groups + 1];
        for (int g = 0; g < groups; g++) {
            off[g + 1] = off[g] + cnt[g];
        }
        return off;
    }

    /** W [G, K, N] transposed to [G, N, K]. */
    static Tensor transpose(Tensor w) {
        int g = (int) w.dim(0);
        int k = (int) w.dim(1);
        int n = (int) w.dim(2);
        Tensor t = Tensor.empty(Device.CPU, w.dtype(), g, n, k);
        for (int e = 0; e < g; e++) {
            for (int kk = 0; kk < k; kk++) {
                for (int c = 0; c < n; c++) {
                    t.setDouble(((long) e * n + c) * k + kk, w.getDouble(((long) e * k + kk) * n + c));
                }
            }
        }
        return t;
    }

    @Property(tries = 40)
    void referenceMatchesPerGroupMatmulAndBothLayoutsAgree(@ForAll @IntRange(min = 1, max = 6) int groups,
                                                           @ForAll @IntRange(min = 1, max = 30) int rows,
                                                           @ForAll @IntRange(min = 1, max = 12) int k,
                                                           @ForAll @IntRange(min = 1, max = 10) int n, @ForAll long seed) {
        Random rnd = new Random(seed);
        int[] off = offsets(rnd, groups, rows);
        try (Tensor x = random(DType.BF16, rnd, rows, k); Tensor w = random(DType.BF16, rnd, groups, k, n); Tensor wt = transpose(w)) {
            GroupedGemmReference.Result kn = GroupedGemmReference.compute(x, w, off, WeightLayout.KN, null, false, null);
            GroupedGemmReference.Result nk = GroupedGemmReference.compute(x, wt, off, WeightLayout.NK, null, false, null);
            assertArrayEquals(kn.value(), nk.value());
            for (int g = 0; g < groups; g++) {
                for (int r = off[g]; r < off[g + 1]; r++) {
                    for (int c = 0; c < n; c++) {
                        double sum = 0;
                        double abs = 0;
                        for (int kk = 0; kk < k; kk++) {
                            double p = x.getDouble((long) r * k + kk) * w.getDouble(((long) g * k + kk) * n + c);
                            sum += p;
                            abs += Math.abs(p);
                        }
                        assertEquals(sum, kn.value()[r * n + c], 1e-12 * abs + 1e-300);
                        assertEquals(abs, kn.absSum()[r * n + c], 1e-12 * abs + 1e-300);
                    }
                }
            }
        }
    }

    @Property(tries = 30)
    void gatherScaleAndSwigluMatchTheirDefinitions(@ForAll @IntRange(min = 1, max = 5) int groups,
                                                   @ForAll @IntRange(min = 1, max = 25) int rows,
                                                   @ForAll @IntRange(min = 1, max = 9) int xRows,
                                                   @ForAll @IntRange(min = 1, max = 10) int k,
                                                   @ForAll @IntRange(min = 1, max = 6) int half, @ForAll long seed) {
        Random rnd = new Random(seed);
        int n = 2 * half;
        int[] off = offsets(rnd, groups, rows);
        int[] gather = new int[rows];
        double[] scale = new double[rows];
        for (int r = 0; r < rows; r++) {
            gather[r] = rnd.nextInt(xRows);
            scale[r] = rnd.nextDouble() * 4 - 2;
        }
        try (Tensor x = random(DType.F16, rnd, xRows, k); Tensor w = random(DType.F16, rnd, groups, k, n);
             Tensor xg = Tensor.empty(Device.CPU, DType.F16, rows, k)) {
            for (int r = 0; r < rows; r++) {
                for (int kk = 0; kk < k; kk++) {
                    xg.setDouble((long) r * k + kk, x.getDouble((long) gather[r] * k + kk));
                }
            }
            GroupedGemmReference.Result plain = GroupedGemmReference.compute(xg, w, off, WeightLayout.KN, null, false, null);
            GroupedGemmReference.Result gathered = GroupedGemmReference.compute(x, w, off, WeightLayout.KN, gather, false, null);
            assertArrayEquals(plain.value(), gathered.value());
            GroupedGemmReference.Result scaled = GroupedGemmReference.compute(x, w, off, WeightLayout.KN, gather, false, scale);
            GroupedGemmReference.Result swiglu = GroupedGemmReference.compute(x, w, off, WeightLayout.KN, gather, true, scale);
            for (int r = 0; r < rows; r++) {
                for (int j = 0; j < n; j++) {
                    assertEquals(scale[r] * plain.value()[r * n + j], scaled.value()[r * n + j], 0.0);
                }
                for (int j = 0; j < half; j++) {
                    double g = plain.value()[r * n + j];
                    double u = plain.value()[r * n + half + j];
                    assertEquals(scale[r] * g / (1 + Math.exp(-g)) * u, swiglu.value()[r * half + j], 1e-15 * (1 + Math.abs(g * u)));
                }
            }
            // error magnitudes: the plain case is the accumulation tolerance's scale (plus bf16's subnormal half-spacing)
            double acc = 1e-5;
            double[] e0 = plain.errorScale(acc, DType.BF16, false);
            for (int i = 0; i < e0.length; i++) {
                assertEquals(plain.absSum()[i], e0[i], 1e-15 * plain.absSum()[i] + 0x1p-134 / acc * 2);
            }
            for (double e : swiglu.errorScale(acc, DType.F16, true)) {
                assertTrue(e >= 0x1p-25 / acc * (1 - 1e-12) && Double.isFinite(e));
            }
        }
    }

    @Property(tries = 25)
    void cpuBackendRoundsTheReferenceOnce(@ForAll @IntRange(min = 1, max = 4) int groups, @ForAll @IntRange(min = 1, max = 20) int rows,
                                          @ForAll @IntRange(min = 1, max = 8) int k, @ForAll @IntRange(min = 1, max = 4) int half,
                                          @ForAll boolean nk, @ForAll boolean bf16, @ForAll long seed) {
        Random rnd = new Random(seed);
        DType dt = bf16 ? DType.BF16 : DType.F16;
        int n = 2 * half;
        int[] off = offsets(rnd, groups, rows);
        float[] sc = new float[rows];
        for (int r = 0; r < rows; r++) {
            sc[r] = rnd.nextFloat() + 0.5f;
        }
        try (Tensor x = random(dt, rnd, rows, k); Tensor w = random(dt, rnd, groups, nk ? n : k, nk ? k : n);
             Tensor o = Tensor.ofInts(Device.CPU, off, groups + 1); Tensor s = Tensor.of(Device.CPU, DType.F32, sc, rows)) {
            Options opt = Options.builder().layout(nk ? WeightLayout.NK : WeightLayout.KN).swiglu(true).rowScale(s).build();
            assertEquals(Backend.REFERENCE, GroupedGemm.decide(x, w, o, opt).backend());
            double[] scale = new double[rows];
            for (int r = 0; r < rows; r++) {
                scale[r] = s.getDouble(r);
            }
            GroupedGemmReference.Result ref = GroupedGemmReference.compute(x, w, off, opt.layout(), null, true, scale);
            try (Tensor y = GroupedGemm.run(x, w, o, opt); Tensor expect = Tensor.empty(Device.CPU, dt, rows, half)) {
                assertArrayEquals(new long[] {rows, half}, y.shape());
                for (int i = 0; i < ref.value().length; i++) {
                    expect.setDouble(i, ref.value()[i]);
                    assertEquals(expect.getRawBits(i), y.getRawBits(i), "element " + i);
                }
            }
        }
    }

    @Test void offsetsAreChecked() {
        assertEquals("offsets", assertThrows(ArgumentException.class, () -> GroupedGemm.checkOffsets(new int[] {1, 2}, 2)).argument());
        assertEquals("offsets", assertThrows(ArgumentException.class, () -> GroupedGemm.checkOffsets(new int[] {0, 3, 2}, 2)).argument());
        assertEquals("offsets", assertThrows(ArgumentException.class, () -> GroupedGemm.checkOffsets(new int[] {0, 1, 1}, 2)).argument());
        GroupedGemm.checkOffsets(new int[] {0, 0, 2, 2}, 2);
    }

    @Property(tries = 60)
    void invalidArgumentsNameTheArgument(@ForAll @IntRange(min = 0, max = 11) int which, @ForAll @IntRange(min = 1, max = 6) int groups) {
        int rows = 7;
        int k = 16;
        int n = 24;
        Random rnd = new Random(which * 31L + groups);
        int[] off = offsets(rnd, groups, rows);
        try (Tensor x = random(DType.F16, rnd, rows, k); Tensor w = random(DType.F16, rnd, groups, k, n);
             Tensor o = Tensor.ofInts(Device.CPU, off, groups + 1)) {
            Options opt = Options.defaults();
            Tensor out = null;
            String expected;
            Tensor extra = null;
            Tensor xx = x;
            Tensor ww = w;
            Tensor oo = o;
            switch (which) {
                case 0: xx = random(DType.F32, rnd, rows, k); extra = xx; expected = "x"; break;
                case 1: ww = random(DType.BF16, rnd, groups, k, n); extra = ww; expected = "w"; break;
                case 2: ww = random(DType.F16, rnd, groups, k + 1, n); extra = ww; expected = "w"; break;
                case 3: oo = Tensor.ofInts(Device.CPU, new int[groups + 2], groups + 2); extra = oo; expected = "offsets"; break;
                case 4: oo = Tensor.of(Device.CPU, DType.F32, new float[groups + 1], groups + 1); extra = oo; expected = "offsets"; break;
                case 5: extra = Tensor.of(Device.CPU, DType.F32, new float[rows], rows); opt = Options.builder().gather(extra).build();
                    expected = "gather"; break;
                case 6: extra = Tensor.of(Device.CPU, DType.F32, new float[rows + 1], rows + 1); opt = Options.builder().rowScale(extra).build();
                    expected = "rowScale"; break;
                case 7: out = Tensor.empty(Device.CPU, DType.F16, rows, n / 2); expected = "out"; break;
                case 8: out = Tensor.empty(Device.CPU, DType.BF16, rows, n); expected = "out"; break;
                case 9: ww = random(DType.F16, rnd, groups, k, n + 1); extra = ww; opt = Options.builder().swiglu(true).build(); expected = "w"; break;
                case 10: ww = random(DType.F16, rnd, groups, n, k + 8); extra = ww; opt = Options.builder().layout(WeightLayout.NK).build();
                    expected = "w"; break;
                default: xx = random(DType.F16, rnd, rows, k, 1); extra = xx; expected = "x"; break;
            }
            final Tensor fx = xx;
            final Tensor fw = ww;
            final Tensor fo = oo;
            final Options fopt = opt;
            final Tensor fout = out == null ? Tensor.empty(Device.CPU, DType.F16, rows, n) : out;
            try {
                ArgumentException e = assertThrows(ArgumentException.class, () -> GroupedGemm.run(fx, fw, fo, fopt, fout, null));
                assertEquals(expected, e.argument(), e.getMessage());
            } finally {
                fout.close();
                if (extra != null) {
                    extra.close();
                }
            }
        }
    }

    @Test void closedTensorsAndNullOptionsAreRejected() {
        Random rnd = new Random(3);
        try (Tensor x = random(DType.BF16, rnd, 4, 8); Tensor o = Tensor.ofInts(Device.CPU, new int[] {0, 4}, 2)) {
            Tensor w = random(DType.BF16, rnd, 1, 8, 8);
            assertEquals("options", assertThrows(ArgumentException.class, () -> GroupedGemm.run(x, w, o, null)).argument());
            w.close();
            assertEquals("w", assertThrows(ArgumentException.class, () -> GroupedGemm.run(x, w, o, Options.defaults())).argument());
        }
        assertEquals("backend", assertThrows(ArgumentException.class, () -> Options.builder().backend(Backend.REFERENCE).build()).argument());
    }
}
