package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.GroupedGemm.Options;
import dev.gapfill.ops.GroupedGemm.WeightLayout;
import dev.gapfill.ops.reference.GroupedGemmReference;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static dev.gapfill.ops.ValidationRule.*;
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
            // error magnitudes: the plain case is exactly the accumulation tolerance's scale (the final rounding's subnormal
            // half-spacing is Verifier.compare's, added once); the rounded path carries its intermediate rounding's
            double acc = 1e-5;
            double[] e0 = plain.errorScale(acc, DType.BF16, false);
            for (int i = 0; i < e0.length; i++) {
                assertEquals(plain.absSum()[i], e0[i], 1e-15 * plain.absSum()[i]);
            }
            for (double e : swiglu.errorScale(acc, DType.F16, true)) {
                assertTrue(e >= 0 && Double.isFinite(e));
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
        assertEquals("offsets", assertThrows(ArgumentException.class, () -> GroupedGemm.checkOffsets(null, 2)).argument());
        assertEquals("offsets", assertThrows(ArgumentException.class, () -> GroupedGemm.checkOffsets(new int[0], 0)).argument());
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

    // ------------------------------------------------------------------ every validation rule, on random problems

    /** A valid problem: x, w, offsets (monotonic 0..T), optional gather and rowScale, SwiGLU or not, a poisoned out. */
    record Problem(DType dt, int groups, int tTotal, int xRows, int k, int n, int nOut, int[] off, Tensor x, Tensor w, Tensor offsets,
                   Tensor gather, Tensor rowScale, Tensor out, Options o) {
        static Problem on(Fixture f, DType dt, int groups, int rows, int xRowsIfGather, int k, int n, WeightLayout layout, boolean gather,
                          boolean scale, boolean swiglu, Backend backend) {
            int[] off = GroupedGemmValidationProperties.offsets(f.rnd, groups, rows);
            int xRows = gather ? xRowsIfGather : rows;
            Tensor x = f.random(dt, xRows, k);
            Tensor w = f.random(dt, layout == WeightLayout.KN ? new long[] {groups, k, n} : new long[] {groups, n, k});
            Tensor offsets = f.ints(off, groups + 1);
            Tensor g = null;
            if (gather) {
                int[] gi = new int[rows];
                for (int r = 0; r < rows; r++) {
                    gi[r] = f.rnd.nextInt(xRows);
                }
                g = f.ints(gi, rows);
            }
            Tensor rs = scale ? f.random(DType.F32, rows) : null;
            int nOut = swiglu ? n / 2 : n;
            Options o = Options.builder().layout(layout).gather(g).rowScale(rs).swiglu(swiglu).backend(backend).build();
            return new Problem(dt, groups, rows, xRows, k, n, nOut, off, x, w, offsets, g, rs, f.poisoned(dt, rows, nOut), o);
        }

        long[] wShape() { return w.shape(); }

        Options with(Tensor gather, Tensor rowScale) {
            return Options.builder().layout(o.layout()).gather(gather).rowScale(rowScale).swiglu(o.swiglu()).backend(o.backend())
                    .vendorPath(o.vendorPath()).build();
        }
    }

    /** Adds a case through every overload that can express it (overloads without out only when out is not under test). */
    private static void add(RuleCheck.Cases c, ValidationRule r, Tensor x, Tensor w, Tensor offsets, Options o, Tensor out, boolean outTargeted) {
        c.add(r, "run(x, w, offsets, options, out, stream)", () -> GroupedGemm.run(x, w, offsets, o, out, null));
        if (!outTargeted) {
            c.add(r, "run(x, w, offsets, options)", () -> RuleCheck.discard(GroupedGemm.run(x, w, offsets, o)));
            c.add(r, "decide(x, w, offsets, options)", () -> GroupedGemm.decide(x, w, offsets, o));
            c.add(r, "outputShape(x, w, offsets, options)", () -> GroupedGemm.outputShape(x, w, offsets, o));
        }
    }

    private static int[] badOffsets(java.util.Random rnd, int[] off, int tTotal) {
        int[] b = off.clone();
        int g = b.length - 1;
        switch (rnd.nextInt(3)) {
            case 0: b[0] = 1 + rnd.nextInt(3); break;                           // offsets[0] != 0
            case 1: b[g] = tTotal + 1 + rnd.nextInt(3); break;                  // offsets[G] != T_total
            default:                                                            // a step down
                int i = 1 + rnd.nextInt(g);
                b[i] = b[i - 1] - 1 - rnd.nextInt(2);
                if (i == g) {
                    b[g] = Math.min(b[g], tTotal - 1);
                }
                break;
        }
        return b;
    }

    /** Every GroupedGemm rule on {@code p}; GPU-only rules on a GPU fixture. */
    static RuleCheck.Cases cases(Fixture f, Problem p) {
        RuleCheck.Cases c = new RuleCheck.Cases();
        java.util.Random rnd = f.rnd;
        DType dt = p.dt();
        Tensor x = p.x();
        Tensor w = p.w();
        Tensor off = p.offsets();
        Tensor out = p.out();
        Options o = p.o();
        int g = p.groups();
        int t = p.tTotal();
        long[] ws = p.wShape();
        long[] outShape = {t, p.nOut()};
        add(c, GG_OPTIONS_NULL, x, w, off, null, out, false);
        c.add(GG_OPTIONS_LAYOUT_NULL, "Builder.build", () -> Options.builder().layout(null).build());
        c.add(GG_OPTIONS_LAYOUT_NULL, "new Options", () -> new Options(null, null, false, null, Backend.AUTO, GroupedGemm.VendorPath.LOOP));
        c.add(GG_OPTIONS_BACKEND, "Builder.build", () -> Options.builder().backend(rnd.nextBoolean() ? null : Backend.REFERENCE).build());
        c.add(GG_OPTIONS_BACKEND, "Options.withBackend", () -> o.withBackend(rnd.nextBoolean() ? null : Backend.REFERENCE));
        c.add(GG_OPTIONS_VENDORPATH_NULL, "Builder.build", () -> Options.builder().vendorPath(null).build());
        add(c, GG_X_NULL, null, w, off, o, out, false);
        add(c, GG_W_NULL, x, null, off, o, out, false);
        add(c, GG_OFFSETS_NULL, x, w, null, o, out, false);
        c.add(GG_OUT_NULL, "run(x, w, offsets, options, out, stream)", () -> GroupedGemm.run(x, w, off, o, null, null));
        add(c, GG_X_CLOSED, f.closed(dt, x.shape()), w, off, o, out, false);
        add(c, GG_W_CLOSED, x, f.closed(dt, ws), off, o, out, false);
        add(c, GG_OFFSETS_CLOSED, x, w, f.closed(DType.I32, g + 1), o, out, false);
        add(c, GG_GATHER_CLOSED, x, w, off, p.with(f.closed(DType.I32, t), p.rowScale()), out, false);
        add(c, GG_ROWSCALE_CLOSED, x, w, off, p.with(p.gather(), f.closed(DType.F32, t)), out, false);
        add(c, GG_OUT_CLOSED, x, w, off, o, f.closed(dt, outShape), true);
        DType otherDt = dt == DType.F16 ? DType.BF16 : DType.F16;
        add(c, GG_X_RANK, f.random(dt, rnd.nextBoolean() ? new long[] {x.numel()} : new long[] {1, x.dim(0), x.dim(1)}), w, off, o, out, false);
        DType badX = new DType[] {DType.F32, DType.I8, DType.I32}[rnd.nextInt(3)];
        add(c, GG_X_DTYPE, f.random(badX, x.shape()), f.random(badX, ws), off, o, out, false);
        c.whereStridable(GG_X_CONTIGUOUS, () -> add(c, GG_X_CONTIGUOUS, f.strided(dt, x.shape()), w, off, o, out, false), x.shape());
        add(c, GG_W_RANK, x, f.random(dt, ws[0] * ws[1], ws[2]), off, o, out, false);
        add(c, GG_W_DTYPE, x, f.random(otherDt, ws), off, o, out, false);
        c.whereStridable(GG_W_CONTIGUOUS, () -> add(c, GG_W_CONTIGUOUS, x, f.strided(dt, ws), off, o, out, false), ws);
        add(c, GG_W_DEVICE, x, f.elsewhere(dt, ws), off, o, out, false);
        long[] wk = ws.clone();
        wk[o.layout() == WeightLayout.KN ? 1 : 2] += 1 + rnd.nextInt(8);
        add(c, GG_W_K, x, f.random(dt, wk), off, o, out, false);
        add(c, GG_OFFSETS_RANK, x, w, f.ints(p.off(), 1, g + 1), o, out, false);
        add(c, GG_OFFSETS_DTYPE, x, w, f.random(rnd.nextBoolean() ? DType.F32 : DType.I8, g + 1), o, out, false);
        c.whereStridable(GG_OFFSETS_CONTIGUOUS,
                () -> add(c, GG_OFFSETS_CONTIGUOUS, x, w, f.strided(DType.I32, g + 1), o, out, false), g + 1);
        add(c, GG_OFFSETS_DEVICE, x, w, f.elsewhere(DType.I32, g + 1), o, out, false);
        add(c, GG_OFFSETS_LENGTH, x, w, f.ints(new int[g + 2], g + 2 + rnd.nextInt(1)), o, out, false);
        add(c, GG_GATHER_RANK, x, w, off, p.with(f.random(DType.I32, 1, t), p.rowScale()), out, false);
        add(c, GG_GATHER_DTYPE, x, w, off, p.with(f.random(rnd.nextBoolean() ? DType.F32 : DType.I8, t), p.rowScale()), out, false);
        c.whereStridable(GG_GATHER_CONTIGUOUS,
                () -> add(c, GG_GATHER_CONTIGUOUS, x, w, off, p.with(f.strided(DType.I32, t), p.rowScale()), out, false), t);
        add(c, GG_GATHER_DEVICE, x, w, off, p.with(f.elsewhere(DType.I32, t), p.rowScale()), out, false);
        long[] wOdd = ws.clone();
        wOdd[o.layout() == WeightLayout.KN ? 2 : 1] = 2L * rnd.nextInt(4) + 1;
        Options swiglu = Options.builder().layout(o.layout()).gather(p.gather()).rowScale(p.rowScale()).swiglu(true).backend(o.backend()).build();
        add(c, GG_SWIGLU_ODD_N, x, f.random(dt, wOdd), off, swiglu, out, false);
        add(c, GG_ROWSCALE_DTYPE, x, w, off, p.with(p.gather(), f.random(rnd.nextBoolean() ? DType.F16 : DType.I32, t)), out, false);
        c.whereStridable(GG_ROWSCALE_CONTIGUOUS,
                () -> add(c, GG_ROWSCALE_CONTIGUOUS, x, w, off, p.with(p.gather(), f.strided(DType.F32, t)), out, false), t);
        add(c, GG_ROWSCALE_DEVICE, x, w, off, p.with(p.gather(), f.elsewhere(DType.F32, t)), out, false);
        add(c, GG_ROWSCALE_SHAPE, x, w, off, p.with(p.gather(), f.random(DType.F32, rnd.nextBoolean() ? new long[] {t + 1} : new long[] {1, t})),
                out, false);
        add(c, GG_OUT_DTYPE, x, w, off, o, f.poisoned(otherDt, outShape), true);
        c.whereStridable(GG_OUT_CONTIGUOUS, () -> add(c, GG_OUT_CONTIGUOUS, x, w, off, o, f.strided(dt, outShape), true), outShape);
        add(c, GG_OUT_DEVICE, x, w, off, o, f.elsewhere(dt, outShape), true);
        add(c, GG_OUT_SHAPE, x, w, off, o, f.poisoned(dt, rnd.nextBoolean() ? new long[] {t + 1, p.nOut()} : new long[] {t, p.nOut() + 1}), true);
        Fixture d = f.deviceSide();
        Tensor dx = d.random(dt, x.shape());
        Tensor dw = d.random(dt, ws);
        Tensor doff = d.ints(p.off(), g + 1);
        Options plain = Options.builder().layout(o.layout()).swiglu(o.swiglu()).backend(o.backend()).build();
        long[] plainOut = {x.dim(0), p.nOut()};
        add(c, GG_OUT_ALIGN, dx, dw, doff, plain, d.misaligned(dt, 4, plainOut), true);
        // device-side: out overlapping an input (one allocation; out 4-byte aligned inside it)
        long eb = dt.bytes();
        Tensor[] ox = d.overlappingBytes(dt, x.shape(), dt, plainOut, d.shiftWithin(x.numel() * eb, 4));
        add(c, GG_OUT_OVERLAP, ox[0], dw, doff, plain, ox[1], true);
        Tensor[] ow = d.overlappingBytes(dt, ws, dt, plainOut, d.shiftWithin(Fixture.numel(ws) * eb, 4));
        add(c, GG_OUT_OVERLAP, dx, ow[0], doff, plain, ow[1], true);
        Tensor[] oo = d.overlappingBytes(DType.I32, new long[] {g + 1}, dt, plainOut, d.shiftWithin(4L * (g + 1), 4));
        add(c, GG_OUT_OVERLAP, dx, dw, oo[0], plain, oo[1], true);
        Tensor[] og = d.overlappingBytes(DType.I32, new long[] {t}, dt, outShape, d.shiftWithin(4L * t, 4));
        Options withGather = Options.builder().layout(o.layout()).gather(og[0]).swiglu(o.swiglu()).backend(o.backend()).build();
        add(c, GG_OUT_OVERLAP, dx, dw, doff, withGather, og[1], true);
        Tensor[] os = d.overlappingBytes(DType.F32, new long[] {x.dim(0)}, dt, plainOut, d.shiftWithin(4L * x.dim(0), 4));
        Options withScale = Options.builder().layout(o.layout()).rowScale(os[0]).swiglu(o.swiglu()).backend(o.backend()).build();
        add(c, GG_OUT_OVERLAP, dx, dw, doff, withScale, os[1], true);
        // 32-bit row indexing: fake tensors (never dereferenced)
        Fixture big = f.fakes();
        long k = p.k();
        long[][] hugeCases = {
            {1L << 27, 16, 16, 16},            // T_x*K = 2^31 (x of 2^31 elements)
            {1L << 20, 8, 2048, 1},            // T_total*N = 2^31 through N
            {1, 1L << 16, 1L << 15, 1},        // K*N = 2^31
        };
        for (long[] hc : hugeCases) {
            long rows = hc[0];
            long kk = hc[1];
            long nn = hc[2];
            Tensor bx = big.fake(DType.F16, rows, kk);
            Tensor bw = big.fake(DType.F16, 1, kk, nn);
            Tensor bo = big.fake(DType.I32, 2);
            Tensor bout = big.fake(DType.F16, rows, nn);
            add(c, GG_INT32, bx, bw, bo, Options.defaults(), bout, false);
        }
        Tensor gx = big.fake(DType.F16, 4, 16);
        Tensor gw = big.fake(DType.F16, 1, 16, 2048);
        Tensor gg = big.fake(DType.I32, 1L << 20);
        Options viaGather = Options.builder().gather(gg).build();
        add(c, GG_INT32, gx, gw, big.fake(DType.I32, 2), viaGather, big.fake(DType.F16, 1L << 20, 2048), false);
        // T_total from a gather of 2^32 + 8 rows with K = 2^31 - 1: T_total·K wraps past 2^63 if multiplied unchecked
        Tensor wideX = big.fake(DType.F16, 1, (1L << 31) - 1);
        Tensor wideW = big.fake(DType.F16, 1, (1L << 31) - 1, 1);
        Options hugeGather = Options.builder().gather(big.fake(DType.I32, (1L << 32) + 8)).build();
        add(c, GG_INT32, wideX, wideW, big.fake(DType.I32, 2), hugeGather, big.fake(DType.F16, (1L << 32) + 8, 1), false);
        Tensor manyW = big.fake(DType.F16, (1L << 31) - 1, 1, 1);
        add(c, GG_INT32, big.fake(DType.F16, 4, 1), manyW, big.fake(DType.I32, 1L << 31), Options.defaults(), big.fake(DType.F16, 4, 1), false);
        // offsets values: checked wherever they are host-readable (the CPU path and checkOffsets)
        Fixture cpu = f.gpu() ? f.track(new Fixture(Device.CPU, rnd.nextLong())) : f;
        int[] bad = badOffsets(rnd, p.off(), t);
        Tensor cx = f.gpu() ? cpu.random(dt, x.shape()) : x;
        Tensor cw = f.gpu() ? cpu.random(dt, ws) : w;
        Tensor cBad = cpu.ints(bad, g + 1);
        Tensor cg = p.gather() == null ? null : f.gpu() ? cpu.ints(new int[t], t) : p.gather();
        Tensor cs = p.rowScale() == null ? null : f.gpu() ? cpu.random(DType.F32, t) : p.rowScale();
        Tensor cOut = f.gpu() ? cpu.poisoned(dt, outShape) : out;
        Options co = p.with(cg, cs);
        c.add(GG_OFFSETS_VALUES, "run(x, w, offsets, options, out, stream)", () -> GroupedGemm.run(cx, cw, cBad, co, cOut, null));
        c.add(GG_OFFSETS_VALUES, "run(x, w, offsets, options)", () -> RuleCheck.discard(GroupedGemm.run(cx, cw, cBad, co)));
        c.add(GG_OFFSETS_VALUES, "checkOffsets(int[], tTotal)", () -> GroupedGemm.checkOffsets(bad, t));
        if (f.gpu()) {
            Tensor devBad = f.ints(bad, g + 1);
            Tensor scratch = f.poisoned(dt, outShape);
            Options debugAny = p.with(p.gather(), p.rowScale());
            c.add(GG_OFFSETS_DEBUG, "run(x, w, offsets, options, out, stream) with -D" + GroupedGemm.DEBUG_CHECK_OFFSETS,
                    () -> RuleCheck.withProperty(GroupedGemm.DEBUG_CHECK_OFFSETS, () -> GroupedGemm.run(x, w, devBad, debugAny, out, null)));
            int[] gi = new int[t];
            for (int r = 0; r < t; r++) {
                gi[r] = rnd.nextInt(p.xRows());
            }
            gi[rnd.nextInt(t)] = rnd.nextBoolean() ? -1 - rnd.nextInt(5) : p.xRows() + rnd.nextInt(5);
            Tensor badGather = f.ints(gi, t);
            Tensor xg = f.random(dt, p.xRows(), p.k());
            c.add(GG_GATHER_DEBUG, "run(x, w, offsets, options, out, stream) with -D" + GroupedGemm.DEBUG_CHECK_OFFSETS,
                    () -> RuleCheck.withProperty(GroupedGemm.DEBUG_CHECK_OFFSETS, () -> GroupedGemm.run(xg, w, off, p.with(badGather, p.rowScale()), out, null)));
            Options vendor = debugAny.withBackend(Backend.VENDOR);
            c.add(GG_OFFSETS_VENDOR, "run(x, w, offsets, options, out, stream)", () -> GroupedGemm.run(x, w, devBad, vendor, out, null));
            c.add(GG_OFFSETS_VENDOR, "run(x, w, offsets, options)", () -> RuleCheck.discard(GroupedGemm.run(x, w, devBad, vendor)));
            // CUSTOM without debug mode: bad offsets are clamped into [0, T_total] on the device (K, N multiples of 8, no SwiGLU)
            Options custom = Options.builder().layout(o.layout()).gather(p.gather()).rowScale(p.rowScale()).backend(Backend.CUSTOM).build();
            Tensor plainScratch = f.poisoned(dt, t, p.n());
            c.add(GG_OFFSETS_CLAMPED, "run(x, w, offsets, options, out, stream)", () -> GroupedGemm.run(x, w, devBad, custom, plainScratch, null));
            long kOdd = k + 1 + rnd.nextInt(7);
            Tensor xo = f.random(dt, x.dim(0), kOdd);
            Tensor wo = f.random(dt, o.layout() == WeightLayout.KN ? new long[] {g, kOdd, p.n()} : new long[] {g, p.n(), kOdd});
            c.add(GG_CUSTOM_UNSUPPORTED, "run(x, w, offsets, options, out, stream)", () -> GroupedGemm.run(xo, wo, off, custom, plainScratch, null));
            c.add(GG_CUSTOM_UNSUPPORTED, "run(x, w, offsets, options)", () -> RuleCheck.discard(GroupedGemm.run(xo, wo, off, custom)));
            Tensor xm = f.misaligned(dt, 16, x.shape());
            c.add(GG_CUSTOM_UNSUPPORTED, "run(x, w, offsets, options, out, stream)", () -> GroupedGemm.run(xm, w, off, custom, plainScratch, null));
            Stream capt = f.track(Stream.create(f.device));
            c.add(GG_VENDOR_CAPTURE, "run(x, w, offsets, options, out, stream) under capture", () -> underCapture(capt,
                    () -> GroupedGemm.run(x, w, off, vendor, scratch, capt)));
            // the vendor passes' int grid-stride indices (2^31-2 elements plus any grid stride wrap them): the gather pass
            // over T_total·K (small tensors), and the epilogue over out's T_total·N' elements (a 4 GiB out)
            long kg = 2L * 3 * 3 * 7 * 11;            // 1386
            long tg = 31L * 151 * 331;                // 1549411; T_total·K = 2^31-2
            Tensor gxg = f.random(dt, 1, kg);
            Tensor gwg = f.random(dt, 1, kg, 8);
            Tensor gog = f.ints(new int[] {0, (int) tg}, 2);
            Tensor ggi = f.ints(new int[(int) tg], tg);
            Tensor gout = f.empty(dt, tg, 8);
            Options gatherVendor = Options.builder().gather(ggi).backend(Backend.VENDOR).build();
            c.add(GG_GATHER_PASS_INT32, "run(x, w, offsets, options, out, stream)", () -> GroupedGemm.run(gxg, gwg, gog, gatherVendor, gout, null));
            c.add(GG_GATHER_PASS_INT32, "run(x, w, offsets, options)", () -> RuleCheck.discard(GroupedGemm.run(gxg, gwg, gog, gatherVendor)));
            Tensor exg = f.random(dt, kg, 8);
            Tensor ewg = f.random(dt, 1, 8, tg);
            Tensor eog = f.ints(new int[] {0, (int) kg}, 2);
            Tensor eout = f.empty(dt, kg, tg);
            Options scaleVendor = Options.builder().rowScale(f.random(DType.F32, kg)).backend(Backend.VENDOR).build();
            c.add(GG_EPILOGUE_PASS_INT32, "run(x, w, offsets, options, out, stream)", () -> GroupedGemm.run(exg, ewg, eog, scaleVendor, eout, null));
            c.add(GG_EPILOGUE_PASS_INT32, "run(x, w, offsets, options)", () -> RuleCheck.discard(GroupedGemm.run(exg, ewg, eog, scaleVendor)));
            RuleCheck.streamCases(c, f, GG_STREAM_CLOSED, GG_STREAM_DEVICE, java.util.Map.of(
                    "run(x, w, offsets, options, out, stream)", st -> () -> GroupedGemm.run(x, w, off, o, out, st)));
        }
        return c;
    }

    /** Runs {@code e} while {@code s} is captured into a CUDA graph (thread-local mode), then ends and drops the capture. */
    static void underCapture(Stream s, org.junit.jupiter.api.function.Executable e) throws Throwable {
        var cd = Gpu.device(s.device());
        org.bytedeco.cuda.cudart.CUgraph_st graph = new org.bytedeco.cuda.cudart.CUgraph_st();
        cd.check(org.bytedeco.cuda.global.cudart.cudaStreamBeginCapture(s.handle(), org.bytedeco.cuda.global.cudart.cudaStreamCaptureModeThreadLocal),
                "cudaStreamBeginCapture");
        try {
            e.execute();
        } finally {
            cd.check(org.bytedeco.cuda.global.cudart.cudaStreamEndCapture(s.handle(), graph), "cudaStreamEndCapture");
            org.bytedeco.cuda.global.cudart.cudaGraphDestroy(graph);
        }
    }

    @Property(tries = 25)
    @Covers({GG_OPTIONS_NULL, GG_OPTIONS_LAYOUT_NULL, GG_OPTIONS_BACKEND, GG_OPTIONS_VENDORPATH_NULL, GG_X_NULL, GG_W_NULL, GG_OFFSETS_NULL,
            GG_OUT_NULL, GG_X_CLOSED, GG_W_CLOSED, GG_OFFSETS_CLOSED, GG_GATHER_CLOSED, GG_ROWSCALE_CLOSED, GG_OUT_CLOSED, GG_X_RANK, GG_X_DTYPE,
            GG_X_CONTIGUOUS, GG_W_RANK, GG_W_DTYPE, GG_W_CONTIGUOUS, GG_W_DEVICE, GG_W_K, GG_OFFSETS_RANK, GG_OFFSETS_DTYPE,
            GG_OFFSETS_CONTIGUOUS, GG_OFFSETS_DEVICE, GG_OFFSETS_LENGTH, GG_GATHER_RANK, GG_GATHER_DTYPE, GG_GATHER_CONTIGUOUS,
            GG_GATHER_DEVICE, GG_SWIGLU_ODD_N, GG_ROWSCALE_DTYPE, GG_ROWSCALE_CONTIGUOUS, GG_ROWSCALE_DEVICE, GG_ROWSCALE_SHAPE, GG_OUT_DTYPE,
            GG_OUT_CONTIGUOUS, GG_OUT_DEVICE, GG_OUT_SHAPE, GG_OUT_ALIGN, GG_OUT_OVERLAP, GG_INT32, GG_OFFSETS_VALUES})
    void everyRuleIsEnforcedBeforeAnyWork(@ForAll @IntRange(min = 1, max = 5) int groups, @ForAll @IntRange(min = 1, max = 20) int rows,
                                          @ForAll @IntRange(min = 1, max = 9) int xRows, @ForAll @IntRange(min = 1, max = 3) int k8,
                                          @ForAll @IntRange(min = 1, max = 3) int n8, @ForAll boolean nk, @ForAll boolean bf16,
                                          @ForAll boolean gather, @ForAll boolean scale, @ForAll boolean swiglu, @ForAll long seed) {
        try (Fixture f = new Fixture(Device.CPU, seed)) {
            Problem p = Problem.on(f, bf16 ? DType.BF16 : DType.F16, groups, rows, xRows, 8 * k8, 8 * n8, nk ? WeightLayout.NK : WeightLayout.KN,
                    gather, scale, swiglu, Backend.AUTO);
            RuleCheck.run(f, cases(f, p), () -> GroupedGemm.run(p.x(), p.w(), p.offsets(), p.o(), p.out(), null), p.out());
        }
    }
}
