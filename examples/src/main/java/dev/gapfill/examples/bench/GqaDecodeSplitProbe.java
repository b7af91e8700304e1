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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Split sweep of gqaDecode's custom kernel: for each shape, every split count of a list (and at D = 64 both block
 * widths, 4 and 8 warps) forced through {@link GqaDecodePlan#DEBUG_SPLITS} / {@link GqaDecodePlan#DEBUG_WARPS}, timed
 * interleaved in one run (L2 flushed before each path, medians), next to the plan the heuristics choose. It measures
 * what the split cost model (GqaDecodeHeuristics.narrowSplits: keys the busiest SM walks plus 128 keys per block) leaves
 * out: the merge of s partials by the last block. F16, BHLD, lengths = L; every variant's sequence 0 (length capped at
 * 2048) is checked against the fp64 reference before timing.
 *
 * <p>Usage (GPU host): {@code java -cp ... dev.gapfill.examples.bench.GqaDecodeSplitProbe [reps [batch]]}; prints a table, one
 * line per shape: the heuristics' plan and its time, then {@code s<count>w<warps>=<µs>} for each variant (8 warps at 1
 * split too, since the thirty-fifth session).
 */
public final class GqaDecodeSplitProbe {
    private GqaDecodeSplitProbe() { }

    record Shape(int b, int hq, int hkv, int d, int l) { }

    static List<Shape> shapes() {
        List<Shape> out = new ArrayList<>();
        for (int l : new int[] {512, 2048, 8192, 16384, 32768}) {
            out.add(new Shape(1, 32, 8, 128, l));
        }
        for (int l : new int[] {2048, 8192, 16384, 65536}) {
            out.add(new Shape(1, 28, 4, 128, l));
        }
        for (int l : new int[] {512, 2048, 8192, 65536, 131072}) {
            out.add(new Shape(1, 16, 2, 64, l));
        }
        out.add(new Shape(4, 16, 2, 64, 8192));
        out.add(new Shape(4, 16, 2, 64, 32768));
        out.add(new Shape(4, 32, 8, 128, 4096));
        out.add(new Shape(16, 16, 2, 64, 8192));
        out.addAll(batchShapes());
        return out;
    }

    /**
     * Thirty-fifth session: batches of 32 to 128 blocks per split (B·Hkv·headTiles), where one split already spreads
     * over a quarter to all of the SMs and the split model still halves or quarters the chunk; at D = 64 the probe
     * also times 8-warp blocks at 1 split. Alone with the argument {@code batch}.
     */
    static List<Shape> batchShapes() {
        List<Shape> out = new ArrayList<>();
        for (int l : new int[] {512, 2048, 8192}) {
            out.add(new Shape(64, 16, 2, 64, l));
            out.add(new Shape(32, 16, 2, 64, l));
            out.add(new Shape(16, 28, 4, 128, l));
            out.add(new Shape(8, 32, 8, 128, l));
        }
        out.add(new Shape(24, 16, 2, 64, 2048));
        out.add(new Shape(12, 28, 4, 128, 2048));
        out.add(new Shape(8, 64, 8, 128, 2048));
        out.add(new Shape(16, 16, 2, 64, 2048));
        out.add(new Shape(16, 32, 8, 128, 512));
        return out;
    }

    public static void main(String[] args) throws Exception {
        int reps = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        run(Device.cuda(0), reps, args.length > 1 && args[1].equals("batch") ? batchShapes() : shapes(), System.out);
    }

    static void run(Device dev, int reps, List<Shape> shapes, PrintStream out) throws Exception {
        int[] counts = {1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128};
        int failed = 0;
        try (BenchContext ctx = new BenchContext(dev, 5, reps, false, m -> { }).fixedReps()) {
            out.printf("# GqaDecodeSplitProbe: %s, F16 BHLD, lengths = L, %d repetitions per path, rotating order, L2 flushed before each;"
                    + " median µs%n", ctx.info().name(), reps);
            for (Shape sh : shapes) {
                failed += shape(ctx, sh, counts, out);
            }
        }
        if (failed > 0) {
            throw new IllegalStateException(failed + " checks failed (lines marked CHECK FAILED)");
        }
    }

    private static int shape(BenchContext ctx, Shape sh, int[] counts, PrintStream out) {
        DType dt = DType.F16;
        Device dev = ctx.device();
        var s = ctx.stream();
        Random rnd = new Random(31L * sh.b() + sh.l() + sh.hq());
        Problem p = Problem.contiguous(sh.b(), sh.hq(), sh.hkv(), sh.d(), sh.l(), KvLayout.BHLD, dt);
        List<GqaDecodePlan> plans = new ArrayList<>();
        List<String> names = new ArrayList<>();
        int failed = 0;
        try (Tensor q = Tensor.empty(dev, dt, s, sh.b(), sh.hq(), sh.d()); Tensor k = Tensor.empty(dev, dt, s, sh.b(), sh.hkv(), sh.l(), sh.d());
             Tensor v = Tensor.empty(dev, dt, s, sh.b(), sh.hkv(), sh.l(), sh.d()); Tensor o = Tensor.empty(dev, dt, s, sh.b(), sh.hq(), sh.d());
             Tensor lse = Tensor.empty(dev, DType.F32, s, sh.b(), sh.hq()); Tensor lens = Tensor.empty(dev, DType.I32, s, sh.b())) {
            GqaDecodeBench.fillRandom(q, dt, rnd, s);
            GqaDecodeBench.fillRandom(k, dt, rnd, s);
            GqaDecodeBench.fillRandom(v, dt, rnd, s);
            KvCache cache = KvCache.bhld(k, v);
            try {
                GqaDecodePlan chosen = GqaDecode.plan(p, dev, Options.defaults().withBackend(Backend.CUSTOM), s);
                plans.add(chosen);
                names.add("plan");
                for (int w : sh.d() == 64 ? new int[] {4, 8} : new int[] {4}) {
                    List<Integer> seen = new ArrayList<>();
                    for (int c : counts) {
                        GqaDecodePlan forced = forced(p, dev, c, w, s);
                        if (forced == null) {
                            continue;
                        }
                        if (seen.contains(forced.splits())) {
                            forced.close();
                            continue;
                        }
                        seen.add(forced.splits());
                        plans.add(forced);
                        names.add("s" + forced.splits() + "w" + w);
                    }
                }
                int[] lv = new int[sh.b()];
                java.util.Arrays.fill(lv, sh.l());
                boolean pass = true;
                GqaDecodeBench.SeqReference ref = new GqaDecodeBench.SeqReference();
                for (GqaDecodePlan pl : plans) {
                    Verdict vd = GqaDecodeBench.checkSequence0(pl, q, cache, lens, o, lse, lv, s, ref);
                    pass &= vd.pass();
                }
                s.synchronize();
                lens.copyFrom(lv);
                LinkedHashMap<String, Runnable> paths = new LinkedHashMap<>();
                for (int i = 0; i < plans.size(); i++) {
                    GqaDecodePlan pl = plans.get(i);
                    paths.put(names.get(i), () -> pl.run(q, cache, lens, o, lse, s));
                }
                Map<String, Timing> t = ctx.timeInterleaved(paths);
                StringBuilder line = new StringBuilder(String.format("B=%d %d/%d d%d L=%d plan %dx%d w%d %.1f |", sh.b(), sh.hq(), sh.hkv(),
                        sh.d(), sh.l(), chosen.splits(), chosen.chunk(), chosen.warps(), t.get("plan").medianUs()));
                for (int i = 1; i < plans.size(); i++) {
                    line.append(String.format(" %s=%.1f", names.get(i), t.get(names.get(i)).medianUs()));
                }
                out.println(line + (pass ? "" : "  CHECK FAILED"));
                failed += pass ? 0 : 1;
            } finally {
                for (GqaDecodePlan pl : plans) {
                    pl.close();
                }
            }
        }
        return failed;
    }

    private static GqaDecodePlan forced(Problem p, Device dev, int splits, int warps, dev.gapfill.core.Stream s) {
        System.setProperty(GqaDecodePlan.DEBUG_SPLITS, Integer.toString(splits));
        System.setProperty(GqaDecodePlan.DEBUG_WARPS, Integer.toString(warps));
        try {
            return GqaDecode.plan(p, dev, Options.defaults().withBackend(Backend.CUSTOM), s);
        } catch (dev.gapfill.core.UnsupportedShapeException e) {
            return null;
        } finally {
            System.clearProperty(GqaDecodePlan.DEBUG_SPLITS);
            System.clearProperty(GqaDecodePlan.DEBUG_WARPS);
        }
    }
}
