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
 * The caches are BHLD or paged (pages in random order).
 *
 * <p>Usage (GPU host): {@code java -cp ... dev.gapfill.examples.bench.GqaDecodeLengthProbe [reps] [pages]}, pages a comma
 * list of page sizes, 0 for the contiguous BHLD cache (default {@code 0}); prints a table.
 */
public final class GqaDecodeLengthProbe {
    private GqaDecodeLengthProbe() { }

    record Heads(int hq, int hkv, int d) { }

    /** A cache of maxLen positions per sequence: contiguous BHLD, or pages of {@code page} positions in random order. */
    record Cache(Problem problem, KvCache kv, Tensor k, Tensor v, Tensor table) implements AutoCloseable {
        static Cache of(BenchContext ctx, Heads h, int b, int maxLen, int page, Random rnd) {
            DType dt = DType.F16;
            Device dev = ctx.device();
            var s = ctx.stream();
            if (page == 0) {
                Tensor k = Tensor.empty(dev, dt, s, b, h.hkv(), maxLen, h.d());
                Tensor v = Tensor.empty(dev, dt, s, b, h.hkv(), maxLen, h.d());
                GqaDecodeBench.fillRandom(k, dt, rnd, s);
                GqaDecodeBench.fillRandom(v, dt, rnd, s);
                return new Cache(Problem.contiguous(b, h.hq(), h.hkv(), h.d(), maxLen, KvLayout.BHLD, dt), KvCache.bhld(k, v), k, v, null);
            }
            int maxPages = (maxLen + page - 1) / page;
            int pages = b * maxPages;
            Tensor k = Tensor.empty(dev, dt, s, pages, page, h.hkv(), h.d());
            Tensor v = Tensor.empty(dev, dt, s, pages, page, h.hkv(), h.d());
            GqaDecodeBench.fillRandom(k, dt, rnd, s);
            GqaDecodeBench.fillRandom(v, dt, rnd, s);
            java.util.List<Integer> perm = new java.util.ArrayList<>();
            for (int i = 0; i < pages; i++) {
                perm.add(i);
            }
            java.util.Collections.shuffle(perm, rnd);
            Tensor table = Tensor.ofInts(dev, perm.stream().mapToInt(Integer::intValue).toArray(), b, maxPages);
            return new Cache(Problem.paged(b, h.hq(), h.hkv(), h.d(), page, maxPages, dt), KvCache.paged(k, v, table), k, v, table);
        }

        @Override public void close() {
            k.close();
            v.close();
            if (table != null) {
                table.close();
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int reps = args.length > 0 ? Integer.parseInt(args[0]) : 30;
        int[] pages = args.length > 1 ? java.util.Arrays.stream(args[1].split(",")).mapToInt(Integer::parseInt).toArray() : new int[] {0};
        run(Device.cuda(0), reps, pages, System.out);
    }

    static void run(Device dev, int reps, int[] pages, PrintStream out) throws Exception {
        Heads[] heads = {new Heads(32, 8, 128), new Heads(28, 4, 128), new Heads(16, 2, 64)};
        int[] fractions = {32, 8, 4, 2, 1};  // longest length L / f
        int failed = 0;
        try (BenchContext ctx = new BenchContext(dev, 5, reps, false, m -> { }).fixedReps()) {
            out.printf("# GqaDecodeLengthProbe: %s, F16, %d repetitions per path, rotating order, L2 flushed before each; median µs%n",
                    ctx.info().name(), reps);
            out.printf("%-16s %-8s %4s %7s %8s %-24s %9s %9s %9s %9s %8s %8s%n", "heads", "layout", "B", "L", "longest", "plan (sized)",
                    "fitted", "plan", "sized", "vendor", "plan/fit", "fit/size");
            for (int page : pages) {
                for (Heads h : heads) {
                    for (int b : new int[] {1, 4}) {
                        for (int l : new int[] {32768, 131072}) {
                            failed += shape(ctx, h, b, l, page, fractions, out);
                        }
                    }
                }
            }
        }
        if (failed > 0) {
            throw new IllegalStateException(failed + " checks failed (rows marked CHECK FAILED)");
        }
    }

    private static int shape(BenchContext ctx, Heads h, int b, int l, int page, int[] fractions, PrintStream out) {
        DType dt = DType.F16;
        Device dev = ctx.device();
        var s = ctx.stream();
        Random rnd = new Random(17L * b + l + h.hq() + page);
        int failed = 0;
        try (Tensor q = Tensor.empty(dev, dt, s, b, h.hq(), h.d()); Tensor o = Tensor.empty(dev, dt, s, b, h.hq(), h.d());
             Tensor lse = Tensor.empty(dev, DType.F32, s, b, h.hq()); Tensor lens = Tensor.empty(dev, DType.I32, s, b);
             Cache big = Cache.of(ctx, h, b, l, page, rnd)) {
            GqaDecodeBench.fillRandom(q, dt, rnd, s);
            KvCache cache = big.kv();
            GqaDecodePlan fitted = GqaDecode.plan(big.problem(), dev, Options.defaults().withBackend(Backend.CUSTOM), s);
            GqaDecodePlan planChunk;
            System.setProperty(GqaDecodePlan.DEBUG_PLAN_CHUNK, "true");
            try {
                planChunk = GqaDecode.plan(big.problem(), dev, Options.defaults().withBackend(Backend.CUSTOM), s);
            } finally {
                System.clearProperty(GqaDecodePlan.DEBUG_PLAN_CHUNK);
            }
            try (fitted; planChunk; GqaDecodePlan vendor = GqaDecode.plan(big.problem(), dev, Options.defaults().withBackend(Backend.VENDOR), s)) {
                for (int f : fractions) {
                    int longest = l / f;
                    int[] lv = new int[b];
                    for (int i = 0; i < b; i++) {
                        lv[i] = i == 0 ? longest : longest / 2 + rnd.nextInt(longest / 2 + 1);
                    }
                    // the sized plan has a cache of its own, of maxLen = the longest length, as a plan per step would
                    try (Cache sizedCache = Cache.of(ctx, h, b, longest, page, rnd);
                         GqaDecodePlan sized = GqaDecode.plan(sizedCache.problem(), dev, Options.defaults().withBackend(Backend.CUSTOM), s)) {
                        boolean pass = true;
                        GqaDecodeBench.SeqReference ref = new GqaDecodeBench.SeqReference();
                        for (GqaDecodePlan pl : new GqaDecodePlan[] {fitted, planChunk, vendor}) {
                            Verdict vd = GqaDecodeBench.checkSequence0(pl, q, cache, lens, o, lse, lv, s, ref);
                            pass &= vd.pass();
                        }
                        Verdict vd = GqaDecodeBench.checkSequence0(sized, q, sizedCache.kv(), lens, o, lse, lv, s, new GqaDecodeBench.SeqReference());
                        pass &= vd.pass();
                        s.synchronize();
                        lens.copyFrom(lv);
                        LinkedHashMap<String, Runnable> paths = new LinkedHashMap<>();
                        paths.put("fitted", () -> fitted.run(q, cache, lens, o, lse, s));
                        paths.put("plan", () -> planChunk.run(q, cache, lens, o, lse, s));
                        paths.put("sized", () -> sized.run(q, sizedCache.kv(), lens, o, lse, s));
                        paths.put("vendor", () -> vendor.run(q, cache, lens, o, lse, s));
                        Map<String, Timing> t = ctx.timeInterleaved(paths);
                        double fit = t.get("fitted").medianUs();
                        double pc = t.get("plan").medianUs();
                        double sz = t.get("sized").medianUs();
                        out.printf("%-16s %-8s %4d %7d %8d %-24s %9.1f %9.1f %9.1f %9.1f %8.2f %8.2f%s%n",
                                h.hq() + "/" + h.hkv() + " d" + h.d(), page == 0 ? "BHLD" : "paged" + page, b, l, longest,
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
