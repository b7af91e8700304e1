package dev.gapfill.examples.bench;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.GqaDecode;
import dev.gapfill.ops.GqaDecode.KvCache;
import dev.gapfill.ops.GqaDecode.KvLayout;
import dev.gapfill.ops.GqaDecode.Options;
import dev.gapfill.ops.GqaDecode.Problem;
import dev.gapfill.ops.GqaDecodePlan;
import dev.gapfill.verify.Verdict;

import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;

/**
 * gqaDecode with lengths well below the plan's maxLen: a plan made once for the longest context (and captured in a
 * graph) serves every step, however short its sequences. The custom kernel's split chunk is the plan's,
 * ceil(maxLen / splits), unless the launch's longest length is at most maxLen / 2^(k+1); then the launch takes the plan's
 * fitted chunk k ({@code GqaDecodeHeuristics.fittedChunks}, {@code decode_mma.cu}). The probe times, interleaved in one
 * run (L2 flushed before each path,
 * medians), per shape and per length fraction f of maxLen (the longest length f·L, the others drawn in [f·L/2, f·L]):
 * <ul>
 *   <li>{@code fitted}: the custom plan of maxLen L as shipped;</li>
 *   <li>{@code plan}: the same plan with {@link GqaDecodePlan#DEBUG_PLAN_CHUNK} (the plan's chunk for every launch);</li>
 *   <li>{@code sized}: a custom plan of maxLen = the longest length (what a plan per step would run);</li>
 *   <li>{@code vendor}: the vendor composition of maxLen L (it pads every GEMM to maxLen).</li>
 * </ul>
 * Before timing, each path's output of sequence 0 (length capped at 2048) is checked against the fp64 reference.
 *
 * <p>Usage (GPU host): {@code java -cp ... dev.gapfill.examples.bench.GqaDecodeLengthProbe [reps]}; prints a table.
 */
public final class GqaDecodeLengthProbe {
    private GqaDecodeLengthProbe() { }

    record Heads(int hq, int hkv, int d) { }

    public static void main(String[] args) throws Exception {
        int reps = args.length > 0 ? Integer.parseInt(args[0]) : 30;
        run(Device.cuda(0), reps, System.out);
    }

    static void run(Device dev, int reps, PrintStream out) throws Exception {
        Heads[] heads = {new Heads(32, 8, 128), new Heads(28, 4, 128), new Heads(16, 2, 64)};
        int[] fractions = {32, 8, 4, 2, 1};  // longest length L / f
        int failed = 0;
        try (BenchContext ctx = new BenchContext(dev, 5, reps, false, m -> { }).fixedReps()) {
            out.printf("# GqaDecodeLengthProbe: %s, F16 BHLD, %d repetitions per path, rotating order, L2 flushed before each; median µs%n",
                    ctx.info().name(), reps);
            out.printf("%-16s %4s %7s %8s %-24s %9s %9s %9s %9s %8s %8s%n", "heads", "B", "L", "longest", "plan (sized)",
                    "fitted", "plan", "sized", "vendor", "plan/fit", "fit/size");
            for (Heads h : heads) {
                for (int b : new int[] {1, 4}) {
                    for (int l : new int[] {32768, 131072}) {
                        failed += shape(ctx, h, b, l, fractions, out);
                    }
                }
            }
        }
        if (failed > 0) {
            throw new IllegalStateException(failed + " checks failed (rows marked CHECK FAILED)");
        }
    }

    private static int shape(BenchContext ctx, Heads h, int b, int l, int[] fractions, PrintStream out) {
        DType dt = DType.F16;
        Device dev = ctx.device();
        var s = ctx.stream();
        Random rnd = new Random(17L * b + l + h.hq());
        Problem big = Problem.contiguous(b, h.hq(), h.hkv(), h.d(), l, KvLayout.BHLD, dt);
        int failed = 0;
        try (Tensor q = Tensor.empty(dev, dt, s, b, h.hq(), h.d()); Tensor k = Tensor.empty(dev, dt, s, b, h.hkv(), l, h.d());
             Tensor v = Tensor.empty(dev, dt, s, b, h.hkv(), l, h.d()); Tensor o = Tensor.empty(dev, dt, s, b, h.hq(), h.d());
             Tensor lse = Tensor.empty(dev, DType.F32, s, b, h.hq()); Tensor lens = Tensor.empty(dev, DType.I32, s, b)) {
            GqaDecodeBench.fillRandom(q, dt, rnd, s);
            GqaDecodeBench.fillRandom(k, dt, rnd, s);
            GqaDecodeBench.fillRandom(v, dt, rnd, s);
            KvCache cache = KvCache.bhld(k, v);
            GqaDecodePlan fitted = GqaDecode.plan(big, dev, Options.defaults().withBackend(Backend.CUSTOM), s);
            GqaDecodePlan planChunk;
            System.setProperty(GqaDecodePlan.DEBUG_PLAN_CHUNK, "true");
            try {
                planChunk = GqaDecode.plan(big, dev, Options.defaults().withBackend(Backend.CUSTOM), s);
            } finally {
                System.clearProperty(GqaDecodePlan.DEBUG_PLAN_CHUNK);
            }
            try (fitted; planChunk; GqaDecodePlan vendor = GqaDecode.plan(big, dev, Options.defaults().withBackend(Backend.VENDOR), s)) {
                for (int f : fractions) {
                    int longest = l / f;
                    int[] lv = new int[b];
                    for (int i = 0; i < b; i++) {
                        lv[i] = i == 0 ? longest : longest / 2 + rnd.nextInt(longest / 2 + 1);
                    }
                    Problem sizedP = Problem.contiguous(b, h.hq(), h.hkv(), h.d(), longest, KvLayout.BHLD, dt);
                    // the sized plan has a contiguous cache of its own, [B, Hkv, longest, D], as a plan per maxLen would
                    Tensor ks = Tensor.empty(dev, dt, s, b, h.hkv(), longest, h.d());
                    Tensor vs = Tensor.empty(dev, dt, s, b, h.hkv(), longest, h.d());
                    GqaDecodeBench.fillRandom(ks, dt, rnd, s);
                    GqaDecodeBench.fillRandom(vs, dt, rnd, s);
                    KvCache sizedCache = KvCache.bhld(ks, vs);
                    try (ks; vs; GqaDecodePlan sized = GqaDecode.plan(sizedP, dev, Options.defaults().withBackend(Backend.CUSTOM), s)) {
                        boolean pass = true;
                        GqaDecodeBench.Seq0Reference ref = new GqaDecodeBench.Seq0Reference();
                        for (GqaDecodePlan pl : new GqaDecodePlan[] {fitted, planChunk, vendor}) {
                            Verdict vd = GqaDecodeBench.checkSequence0(pl, q, cache, lens, o, lse, lv, s, ref);
                            pass &= vd.pass();
                        }
                        Verdict vd = GqaDecodeBench.checkSequence0(sized, q, sizedCache, lens, o, lse, lv, s, new GqaDecodeBench.Seq0Reference());
                        pass &= vd.pass();
                        s.synchronize();
                        lens.copyFrom(lv);
                        LinkedHashMap<String, Runnable> paths = new LinkedHashMap<>();
                        paths.put("fitted", () -> fitted.run(q, cache, lens, o, lse, s));
                        paths.put("plan", () -> planChunk.run(q, cache, lens, o, lse, s));
                        paths.put("sized", () -> sized.run(q, sizedCache, lens, o, lse, s));
                        paths.put("vendor", () -> vendor.run(q, cache, lens, o, lse, s));
                        Map<String, Timing> t = ctx.timeInterleaved(paths);
                        double fit = t.get("fitted").medianUs();
                        double pc = t.get("plan").medianUs();
                        double sz = t.get("sized").medianUs();
                        out.printf("%-16s %4d %7d %8d %-24s %9.1f %9.1f %9.1f %9.1f %8.2f %8.2f%s%n",
                                h.hq() + "/" + h.hkv() + " d" + h.d(), b, l, longest,
                                fitted.splits() + "x" + fitted.chunk() + " (" + sized.splits() + "x" + sized.chunk() + ")",
                                fit, pc, sz, t.get("vendor").medianUs(), pc / fit, fit / sz, pass ? "" : "  CHECK FAILED");
                        failed += pass ? 0 : 1;
                    }
                }
            }
        }
        return failed;
    }
}
