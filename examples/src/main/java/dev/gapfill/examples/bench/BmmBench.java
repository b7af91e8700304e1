package dev.gapfill.examples.bench;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.Bmm;
import dev.gapfill.ops.BmmHeuristics;
import dev.gapfill.ops.BmmShape;
import dev.gapfill.ops.Decision;
import dev.gapfill.ops.reference.BmmReference;
import dev.gapfill.verify.Tolerance;
import dev.gapfill.verify.Verdict;
import dev.gapfill.verify.Verifier;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The bmm sweep of issue 3: batch ∈ {512, 2048, 8192} × square n ∈ {8, 16, 32, 48, 64, 96, 128, 192, 256}
 * × {F16, BF16, F32}, plus at batch 2048 the shapes (m,n,k) = (17,33,9), (100,100,100), (1,64,64),
 * (64,1,64), (32,128,64) and a shared-B 64³. Vendor, custom (where m, n, k ≤ 128) and AUTO are timed
 * interleaved. Floor = max(bytes of A, B, C / measured copy bandwidth, flops / rate), rate = the measured
 * bf16 GEMM ceiling for F16/BF16 and 51.7 TFLOP/s for F32 (the FFMA ceiling of the anchors README).
 *
 * <p>Before timing, each path's output is poisoned, computed once and compared with the fp64 reference
 * on every element of a sample of matrices (all of them when the problem is small: at most
 * {@value #CHECK_MACS} multiply-adds are re-done on the CPU per path), first and last included.
 */
public final class BmmBench implements BenchSuite {
    /** The FFMA ceiling of an H100 from ../shared/anchors/README.md (fp32 GEMM without TF32). */
    static final double F32_FFMA_TFLOPS = 51.7;
    static final long CHECK_MACS = 20_000_000L;

    @Override public String op() { return "bmm"; }

    @Override public boolean resumable() { return true; }

    @Override public List<BenchRow> run(BenchContext ctx) {
        List<BenchRow> rows = ctx.rows(op());
        Random rnd = new Random(3);
        for (Case c : cases(ctx.quick())) {
            if (!ctx.wants(c.dt())) {
                continue;  // bench --dtype
            }
            if (ctx.done(op(), c.dt().name(), "batch", c.batch(), "m", c.m(), "n", c.n(), "k", c.k(), "shared_b", c.shared())) {
                continue;  // measured by an earlier run of this commit (bench --resume)
            }
            rows.add(runCase(ctx, c, rnd));
        }
        return rows;
    }

    record Case(DType dt, int batch, int m, int n, int k, boolean shared) {}

    static List<Case> cases(boolean quick) {
        List<Case> l = new ArrayList<>();
        DType[] dts = {DType.F16, DType.BF16, DType.F32};
        if (quick) {
            l.add(new Case(DType.F16, 2048, 16, 16, 16, false));
            l.add(new Case(DType.F16, 2048, 64, 64, 64, false));
            l.add(new Case(DType.F32, 2048, 32, 32, 32, false));
            l.add(new Case(DType.BF16, 512, 256, 256, 256, false));
            l.add(new Case(DType.F16, 2048, 64, 64, 64, true));
            return l;
        }
        for (int batch : new int[] {512, 2048, 8192}) {
            for (int n : new int[] {8, 16, 32, 48, 64, 96, 128, 192, 256}) {
                for (DType dt : dts) {
                    l.add(new Case(dt, batch, n, n, n, false));
                }
            }
        }
        // beyond the list: rows in 8-byte but not 16-byte multiples (60³, 36×44×52: u = 4, bmm_team8; 76×60×36: u = 6,
        // 76³: u = 9, 100³: u = 16, bmm_wg on sm_90), odd and degenerate shapes
        int[][] special = {{17, 33, 9}, {100, 100, 100}, {1, 64, 64}, {64, 1, 64}, {32, 128, 64}, {60, 60, 60}, {76, 76, 76}, {36, 44, 52},
                {76, 60, 36}};
        for (DType dt : dts) {
            for (int[] s : special) {
                l.add(new Case(dt, 2048, s[0], s[1], s[2], false));
            }
            l.add(new Case(dt, 2048, 64, 64, 64, true));
        }
        return l;
    }

    private BenchRow runCase(BenchContext ctx, Case c, Random rnd) {
        Device dev = ctx.device();
        long aN = (long) c.batch() * c.m() * c.k();
        long bN = (c.shared() ? 1L : c.batch()) * c.k() * c.n();
        long[] bShape = c.shared() ? new long[] {c.k(), c.n()} : new long[] {c.batch(), c.k(), c.n()};
        BmmShape shape = BmmShape.of(c.dt(), c.batch(), c.m(), c.n(), c.k()).withSharedB(c.shared());
        boolean customOk = BmmHeuristics.customUnsupportedReason(shape, ctx.info()) == null;
        try (Tensor aFlat = randomDevice(ctx, c.dt(), rnd, aN); Tensor bFlat = randomDevice(ctx, c.dt(), rnd, bN);
             Tensor out = Tensor.empty(dev, c.dt(), ctx.stream(), c.batch(), c.m(), c.n())) {
            Tensor a = aFlat.reshape(c.batch(), c.m(), c.k());
            Tensor b = bFlat.reshape(bShape);
            Bmm.Options vendor = Bmm.Options.defaults().backend(Backend.VENDOR);
            Bmm.Options custom = Bmm.Options.defaults().backend(Backend.CUSTOM);
            Bmm.Options auto = Bmm.Options.defaults();
            Decision autoDecision = Bmm.decide(a, b, auto);

            List<Verdict> verdicts = new ArrayList<>();
            verdicts.add(checkPath(ctx, a, b, out, vendor, c, "vendor"));
            if (customOk) {
                verdicts.add(checkPath(ctx, a, b, out, custom, c, "custom"));
            }

            LinkedHashMap<String, Runnable> paths = new LinkedHashMap<>();
            paths.put("vendor", () -> Bmm.bmm(a, b, out, vendor, ctx.stream()));
            if (customOk) {
                paths.put("custom", () -> Bmm.bmm(a, b, out, custom, ctx.stream()));
            }
            paths.put("auto", () -> Bmm.bmm(a, b, out, auto, ctx.stream()));
            Map<String, Timing> t = ctx.timeInterleaved(paths);

            long bytes = shape.minBytes();
            double flops = shape.flops();
            double rate = c.dt() == DType.F32 ? F32_FFMA_TFLOPS : ctx.ceilings().bf16GemmTflops();
            double floor = ctx.floorUs(bytes, flops, rate);
            Map<String, double[]> spread = new LinkedHashMap<>();
            t.forEach((k, v) -> spread.put(k, new double[] {v.p10Us(), v.p90Us()}));
            boolean pass = verdicts.stream().allMatch(Verdict::pass);
            boolean exact = verdicts.stream().allMatch(Verdict::bitExact);
            long maxUlp = verdicts.stream().mapToLong(Verdict::maxUlp).max().orElse(0);
            double maxRel = verdicts.stream().mapToDouble(Verdict::maxRelErr).max().orElse(0);
            String against = "reference (" + String.join(", ", verdicts.stream().map(Verdict::against).toList()) + ")";
            Map<String, Object> shapeMap = BenchRow.shape("batch", c.batch(), "m", c.m(), "n", c.n(), "k", c.k(), "shared_b", c.shared());
            Double customUs = customOk ? t.get("custom").medianUs() : null;
            BenchRow row = new BenchRow(op(), c.dt().name(), shapeMap, regime(shape, customOk), t.get("vendor").medianUs(), customUs,
                    t.get("auto").medianUs(), autoDecision.backend() + "/" + autoDecision.variant(), floor, bytes, flops, Map.of(), spread,
                    new BenchRow.Check(against, exact, maxUlp, maxRel, pass));
            ctx.progress(String.format("bmm %s batch=%d %dx%dx%d%s: vendor %.2f us, custom %s, auto %.2f us (%s), floor %.2f us, check %s",
                    c.dt(), c.batch(), c.m(), c.n(), c.k(), c.shared() ? " sharedB" : "", row.vendorUs(),
                    customUs == null ? "n/a" : String.format("%.2f us", customUs), row.autoUs(), row.autoBackend(), floor,
                    pass ? "pass" : "FAIL"));
            return row;
        }
    }

    private static String regime(BmmShape s, boolean customOk) {
        if (!customOk) {
            return "large (vendor only, m/n/k > " + BmmHeuristics.CUSTOM_MAX_DIM + ")";
        }
        long max = Math.max(s.m(), Math.max(s.n(), s.k()));
        return max <= 32 ? "tiny (<= 32)" : "small (33..128)";
    }

    /**
     * Runs one path on a poisoned output and compares every element of a sample of matrices with the
     * fp64 reference (growth 2 on tensor cores, 1 for F32 FFMA; custom F32 must equal the in-order fmaf sum).
     */
    private static Verdict checkPath(BenchContext ctx, Tensor a, Tensor b, Tensor out, Bmm.Options o, Case c, String name) {
        out.fillBytes(0xff, ctx.stream());
        Bmm.bmm(a, b, out, o, ctx.stream());
        ctx.stream().synchronize();
        long macsPerMatrix = (long) c.m() * c.n() * c.k();
        int sample = (int) Math.max(2, Math.min(c.batch(), CHECK_MACS / Math.max(1, macsPerMatrix)));
        List<Integer> mats = new ArrayList<>();
        for (int i = 0; i < sample; i++) {
            mats.add((int) ((long) i * (c.batch() - 1) / Math.max(1, sample - 1)));
        }
        Verdict worst = null;
        long elements = 0;
        boolean allExact = true;
        long maxUlp = 0;
        double maxRel = 0;
        long failures = 0;
        String first = null;
        int distinct = 0;
        int last = -1;
        for (int bi : mats) {
            if (bi == last) {
                continue;
            }
            last = bi;
            distinct++;
            try (Tensor ha = matrix(a, bi, c.m(), c.k()); Tensor hb = c.shared() ? b.to(Device.CPU) : matrix(b, bi, c.k(), c.n());
                 Tensor hc = matrix(out, bi, c.m(), c.n())) {
                BmmReference.Result ref = BmmReference.exact(ha, hb, false, false);
                boolean tensorCores = c.dt() != DType.F32;
                Verdict v = Verifier.compare(hc, ref.exact(), ref.absSum(), Tolerance.accumulation(c.dt(), c.k(), tensorCores ? 2 : 1), "reference");
                if (c.dt() == DType.F32 && name.equals("custom")) {
                    double[] seq = BmmReference.sequentialFmaF32(ha, hb, false, false);
                    Verdict exactOrder = Verifier.compare(hc, seq, null, Tolerance.bitExact(), "in-order fmaf");
                    if (!exactOrder.pass()) {
                        v = exactOrder;
                    }
                }
                elements += v.elements();
                allExact &= v.bitExact();
                maxUlp = Math.max(maxUlp, v.maxUlp());
                maxRel = Math.max(maxRel, v.maxRelErr());
                failures += v.failures();
                if (first == null && v.firstFailure() != null) {
                    first = "matrix " + bi + ": " + v.firstFailure();
                }
                worst = v;
            }
        }
        String label = name + " " + distinct + "/" + c.batch() + " matrices";
        return new Verdict(label, worst == null ? "" : worst.tolerance(), elements, allExact, 0, maxUlp, maxRel, failures, first, failures == 0);
    }

    /** Matrix {@code bi} of a [batch, rows, cols] device tensor, copied to the host as [1, rows, cols]. */
    private static Tensor matrix(Tensor t, int bi, int rows, int cols) {
        long[] shape = {1, rows, cols};
        Tensor view = t.strided(shape, Tensor.contiguousStrides(shape), (long) bi * rows * cols);
        return view.to(Device.CPU);
    }

    /**
     * A device tensor of {@code numel} uniform values in [-1, 1): a random pool of up to 4 Mi elements uploaded once, then
     * spread by {@link RandomFill}'s copies (sizes too large for one host array; matrices a pool apart no longer alike).
     */
    static Tensor randomDevice(BenchContext ctx, DType dt, Random rnd, long numel) {
        Tensor out = Tensor.empty(ctx.device(), dt, ctx.stream(), numel);
        try {
            RandomFill.fill(out, rnd, 1f, 1 << 22, ctx.stream());
        } catch (RuntimeException e) {
            out.close();
            throw e;
        }
        return out;
    }

}
