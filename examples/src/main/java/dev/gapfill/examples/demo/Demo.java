package dev.gapfill.examples.demo;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.examples.bench.BenchRow;
import dev.gapfill.examples.bench.Timing;
import dev.gapfill.examples.demo.MoeLayer.Buffers;
import dev.gapfill.examples.demo.MoeLayer.Composition;
import dev.gapfill.examples.demo.MoeLayer.Tokens;
import dev.gapfill.examples.demo.MoeLayer.Weights;
import dev.gapfill.ops.Backend;
import dev.gapfill.verify.AttentionTolerance;
import dev.gapfill.ops.Decision;
import dev.gapfill.ops.GqaDecode;
import dev.gapfill.ops.GqaDecodePlan;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code gapfill demo}: two model layers end to end, each as the Gapfill composition and as the composition a user
 * without Gapfill writes, every output checked against the fp64 reference before anything is timed.
 * <ul>
 *   <li>{@code moe_layer}: {@link MoeLayer} (routing, gate-up, down, combine); Gapfill = grouped GEMMs on AUTO, captured
 *   in a CUDA graph and replayed (its eager run timed too), vendor = the same with {@code Backend.VENDOR} (offsets to the
 *   host, then a cuBLAS GEMM per expert or one grouped-batched call, whichever is faster).</li>
 *   <li>{@code decode_step}: {@link DecodeStep} (paged GQA attention, lengths growing over {@value DecodeStep#STEPS}
 *   steps); Gapfill = an AUTO plan captured once in a CUDA graph and replayed each step; vendor = a VENDOR plan (cuBLAS
 *   GEMMs and glue kernels) captured and replayed the same way since the forty-ninth session (it ran eagerly before; its
 *   eager time is the peer {@code vendor_eager}). Both read the step's lengths from a device buffer updated in stream
 *   order before each step.</li>
 * </ul>
 */
public final class Demo {
    /** The targets on Hopper at decode sizes (T ≤ 64; B ≤ 8, L ≥ 4096): Gapfill / vendor speedups. */
    public static final double MOE_TARGET = 3.0;
    public static final double DECODE_TARGET = 2.0;

    private Demo() {}

    /**
     * What to run.
     *
     * @param moe    the MoE layer's sizes
     * @param tokens the token counts T of the MoE rows
     * @param decode the decode steps' shapes
     */
    public record Plan(MoeLayer.Config moe, int[] tokens, List<DecodeStep.Config> decode) {
        /** The decode sizes: E=64 top-8 H=2048 I=1024 at T ∈ {1, 16, 64}; B ∈ {1, 4, 8} × L ∈ {4096, 16384}, 32/8 heads, D=128. */
        public static Plan gpu(boolean quick) {
            MoeLayer.Config moe = new MoeLayer.Config(64, 8, 2048, 1024, DType.BF16);
            List<DecodeStep.Config> decode = new ArrayList<>();
            int[][] bl = quick ? new int[][] {{1, 4096}, {8, 4096}}
                    : new int[][] {{1, 4096}, {4, 4096}, {8, 4096}, {1, 16384}, {4, 16384}, {8, 16384}};
            for (int[] x : bl) {
                decode.add(new DecodeStep.Config(x[0], x[1], 32, 8, 128, 16, DType.BF16));
            }
            return new Plan(moe, quick ? new int[] {1, 64} : new int[] {1, 16, 64}, decode);
        }

        /** A small size the CPU reference backend runs in a fraction of a second. */
        public static Plan cpu() {
            return new Plan(new MoeLayer.Config(8, 2, 64, 32, DType.BF16), new int[] {1, 5},
                    List.of(new DecodeStep.Config(1, 128, 8, 2, 64, 16, DType.BF16), new DecodeStep.Config(3, 128, 8, 2, 64, 16, DType.BF16)));
        }
    }

    /** Runs every row of {@code plan} on {@code env}. */
    public static List<DemoRow> run(DemoEnv env, Plan plan) {
        List<DemoRow> rows = new ArrayList<>();
        env.progress().accept("moe_layer " + plan.moe().text() + ": generating expert weights");
        try (Weights w = Weights.random(plan.moe(), env.device(), 8)) {
            for (int t : plan.tokens()) {
                rows.add(moeLayer(env, w, t));
            }
        }
        for (DecodeStep.Config c : plan.decode()) {
            rows.add(decodeStep(env, c));
        }
        return rows;
    }

    /**
     * One MoE row: every composition runs into poisoned buffers and is checked; on a GPU the Gapfill layer is then also
     * captured in a CUDA graph, replayed into poisoned buffers and checked again. After a JIT warm-up of every path, all
     * are timed interleaved: the row's Gapfill time is the graph replay (how a service runs a decode-time layer that never
     * waits for the host), its eager time a peer ({@code gapfill_eager}); the vendor layers copy the offsets to the host
     * and cannot be captured, so they run eagerly.
     */
    public static DemoRow moeLayer(DemoEnv env, Weights w, int tokens) {
        MoeLayer.Config c = w.config();
        Stream s = env.stream();
        try (Tokens in = Tokens.random(c, tokens, env.device(), 1000L + tokens);
             Buffers gapfill = new Buffers(c, tokens, Composition.GAPFILL, env.device());
             Buffers vendor = new Buffers(c, tokens, Composition.VENDOR, env.device());
             Buffers vendorGrouped = new Buffers(c, tokens, Composition.VENDOR_GROUPED, env.device())) {
            for (Buffers b : List.of(gapfill, vendor, vendorGrouped)) {
                b.poison(s);
                MoeLayer.forward(w, in, b, s);
            }
            env.sync();
            List<LayerCheck> checks = new ArrayList<>(MoeLayerCheck.verify(w, in, List.of(gapfill, vendor, vendorGrouped)));
            Runnable gapfillEager = () -> MoeLayer.forward(w, in, gapfill, s);
            LinkedHashMap<String, Runnable> paths = new LinkedHashMap<>();
            paths.put("vendor_loop", () -> MoeLayer.forward(w, in, vendor, s));
            paths.put("vendor_grouped", () -> MoeLayer.forward(w, in, vendorGrouped, s));
            CudaGraph graph = null;
            try {
                if (env.onGpu()) {
                    paths.put("gapfill_eager", gapfillEager);
                    gapfill.poison(s);
                    graph = CudaGraph.capture(s, gapfillEager);
                    CudaGraph g = graph;
                    g.launch(s);
                    env.sync();
                    LayerCheck replay = MoeLayerCheck.verify(w, in, List.of(gapfill)).get(0);
                    checks.add(new LayerCheck("gapfill_graph", replay.stages()));
                    paths.put("gapfill", () -> g.launch(s));
                } else {
                    paths.put("gapfill", gapfillEager);
                }
                env.warmUp(paths);
                Map<String, Timing> measured = env.time(paths);
                env.sync();
                // the vendor composition is the faster of cuBLAS's two formulations, measured in the same interleaved run
                boolean loopWins = measured.get("vendor_loop").medianUs() <= measured.get("vendor_grouped").medianUs();
                Map<String, Timing> t = new LinkedHashMap<>(measured);
                t.put("vendor", measured.get(loopWins ? "vendor_loop" : "vendor_grouped"));
                int active = activeExperts(gapfill.routing.offsets.toIntArray());
                String choice = env.onGpu() ? String.format(java.util.Locale.ROOT,
                        "gapfill: route CUSTOM, %s, in a CUDA graph (eager %.1f us); vendor = %s (loop %.1f us: %s; grouped %.1f us: %s)",
                        MoeLayer.decisions(w, in, gapfill), measured.get("gapfill_eager").medianUs(), loopWins ? "loop" : "grouped",
                        measured.get("vendor_loop").medianUs(), MoeLayer.decisions(w, in, vendor), measured.get("vendor_grouped").medianUs(),
                        MoeLayer.decisions(w, in, vendorGrouped)) : "all: CPU reference backend";
                String shape = c.text() + " T=" + tokens;
                BenchRow bench = null;
                if (env.onGpu()) {
                    long bytes = Floors.moeBytes(c, tokens, active);
                    double flops = Floors.moeFlops(c, tokens);
                    bench = benchRow("moe_layer", c.dtype(), BenchRow.shape("experts", c.experts(), "topk", c.topK(), "hidden", c.hidden(),
                            "inter", c.inter(), "tokens", tokens, "active_experts", active), t, choice, env.bench().floorUs(bytes, flops),
                            bytes, flops, checks);
                }
                DemoRow row = new DemoRow("moe_layer", shape, t.get("vendor"), t.get("gapfill"), checks, MOE_TARGET, choice, bench);
                env.progress().accept(progressLine(row));
                return row;
            } finally {
                closeAfterSync(env, graph);
            }
        }
    }

    /** One decode row: 64 steps of each composition checked (poison, reference at steps 0, 31, 63), then timed. */
    public static DemoRow decodeStep(DemoEnv env, DecodeStep.Config c) {
        Device dev = env.device();
        Stream s = env.stream();
        env.progress().accept("decode_step " + c.text() + ": generating the paged cache");
        GqaDecode.Problem p = c.problem();
        try (DecodeStep d = DecodeStep.random(c, dev, 7L * c.batch() + c.capacity());
             Tensor outG = Tensor.empty(dev, c.dtype(), s, c.batch(), c.qHeads(), c.headDim());
             Tensor lseG = Tensor.empty(dev, DType.F32, s, c.batch(), c.qHeads());
             Tensor outV = Tensor.empty(dev, c.dtype(), s, c.batch(), c.qHeads(), c.headDim());
             Tensor lseV = Tensor.empty(dev, DType.F32, s, c.batch(), c.qHeads());
             GqaDecodePlan gapfill = GqaDecode.plan(p, dev, GqaDecode.Options.defaults(), s);
             GqaDecodePlan vendor = GqaDecode.plan(p, dev, GqaDecode.Options.defaults().withBackend(Backend.VENDOR), s)) {
            Runnable gapfillRun = () -> gapfill.run(d.q, d.cache, d.lens, outG, lseG, s);
            Runnable vendorRun = () -> vendor.run(d.q, d.cache, d.lens, outV, lseV, s);
            CudaGraph graph = null;
            CudaGraph vendorGraph = null;
            try {
                Runnable gapfillStep = gapfillRun;
                Runnable vendorStep = vendorRun;
                if (env.onGpu()) {
                    // Both plans captured in a graph and replayed, as a decode loop would run either (since the forty-ninth
                    // session: before, the vendor plan ran eagerly against Gapfill's graph); the eager vendor run is a peer
                    gapfillRun.run();  // once outside the capture, on this thread
                    vendorRun.run();   // (creates this thread's cuBLAS handle outside the capture)
                    s.synchronize();
                    graph = CudaGraph.capture(s, gapfillRun);
                    vendorGraph = CudaGraph.capture(s, vendorRun);
                    CudaGraph g = graph;
                    CudaGraph vg = vendorGraph;
                    gapfillStep = () -> g.launch(s);
                    vendorStep = () -> vg.launch(s);
                }
                List<LayerCheck> checks = List.of(
                        d.verify("gapfill", gapfillStep, outG, lseG, s, gapfill.scale(),
                                AttentionTolerance.roundsProbabilities(gapfill.decision().backend())),
                        d.verify("vendor", vendorStep, outV, lseV, s, vendor.scale(),
                                AttentionTolerance.roundsProbabilities(vendor.decision().backend())));
                LinkedHashMap<String, Runnable> paths = new LinkedHashMap<>();
                paths.put("vendor", d.advancing(s, vendorStep));
                paths.put("gapfill", d.advancing(s, gapfillStep));
                if (env.onGpu()) {
                    paths.put("vendor_eager", d.advancing(s, vendorRun));
                }
                env.warmUp(paths);
                Map<String, Timing> t = env.time(paths);
                env.sync();
                String choice = env.onGpu() ? "gapfill: " + describe(gapfill.decision()) + " in a CUDA graph, " + gapfill.splits()
                        + " splits; vendor: " + describe(vendor.decision()) + String.format(java.util.Locale.ROOT,
                        " in a CUDA graph (eager %.1f us)", t.get("vendor_eager").medianUs()) : "both: CPU reference backend";
                BenchRow bench = null;
                if (env.onGpu()) {
                    long bytes = Floors.decodeBytes(c, d.totalPositions(), DecodeStep.STEPS);
                    double flops = Floors.decodeFlops(c, d.totalPositions(), DecodeStep.STEPS);
                    bench = benchRow("decode_step", c.dtype(), BenchRow.shape("B", c.batch(), "L", c.capacity(), "Hq", c.qHeads(), "Hkv",
                            c.kvHeads(), "D", c.headDim(), "layout", "PAGED", "page", c.pageSize(), "steps", DecodeStep.STEPS,
                            "lens", "[L-" + DecodeStep.STEPS + "-L/4, L-" + DecodeStep.STEPS + "] + step"), t, choice,
                            env.bench().floorUs(bytes, flops), bytes, flops, checks);
                }
                DemoRow row = new DemoRow("decode_step", c.text(), t.get("vendor"), t.get("gapfill"), checks, DECODE_TARGET, choice, bench);
                env.progress().accept(progressLine(row));
                return row;
            } finally {
                try {
                    closeAfterSync(env, graph);
                } finally {
                    closeAfterSync(env, vendorGraph);
                }
            }
        }
    }

    /** Waits for the stream, then destroys {@code graph} (if one was captured): its replays may still be in flight. */
    private static void closeAfterSync(DemoEnv env, CudaGraph graph) {
        env.sync();
        if (graph != null) {
            graph.close();
        }
    }

    private static String describe(Decision d) {
        return d.backend() + "/" + d.variant();
    }

    static int activeExperts(int[] offsets) {
        int n = 0;
        for (int e = 0; e + 1 < offsets.length; e++) {
            n += offsets[e + 1] > offsets[e] ? 1 : 0;
        }
        return n;
    }

    /** The {@code demo.json} row: vendor = the vendor composition, custom = auto = the Gapfill composition. */
    private static BenchRow benchRow(String op, DType dt, Map<String, Object> shape, Map<String, Timing> t, String choice, double floorUs,
                                     long bytes, double flops, List<LayerCheck> checks) {
        Map<String, double[]> spread = new LinkedHashMap<>();
        t.forEach((name, x) -> spread.put(name, new double[] {x.p10Us(), x.p90Us()}));
        Map<String, Double> peers = new LinkedHashMap<>();
        t.forEach((name, x) -> {
            if (!name.equals("vendor") && !name.equals("gapfill")) {
                peers.put(name, x.medianUs());
            }
        });
        boolean pass = checks.stream().allMatch(LayerCheck::pass);
        boolean exact = checks.stream().allMatch(LayerCheck::outputBitExact);
        long ulp = checks.stream().mapToLong(LayerCheck::outputUlp).max().orElse(0);
        double rel = checks.stream().mapToDouble(LayerCheck::outputRelErr).max().orElse(0);
        String against = "reference, every output of every composition (" + checks.get(0).outputs() + "; checked: "
                + String.join(", ", checks.stream().map(LayerCheck::path).toList()) + "); bit_exact, max_ulp and max_rel_err of out";
        double g = t.get("gapfill").medianUs();
        return new BenchRow(op, dt.name(), shape, "decode", t.get("vendor").medianUs(), g, g, choice, floorUs, bytes, flops, peers,
                spread, new BenchRow.Check(against, exact, ulp, rel, pass));
    }

    private static String progressLine(DemoRow r) {
        return String.format(java.util.Locale.ROOT, "%s %s: vendor %.1f us, gapfill %.1f us (%.2fx), %s", r.layer(), r.shape(),
                r.vendor().medianUs(), r.gapfill().medianUs(), r.speedup(), r.verified() ? "verified" : "VERIFICATION FAILED");
    }
}
