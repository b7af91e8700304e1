package dev.gapfill.examples.lessons;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Stream;
import dev.gapfill.examples.bench.BenchContext;
import dev.gapfill.examples.bench.Timing;
import dev.gapfill.examples.demo.DemoEnv;
import dev.gapfill.examples.demo.LayerCheck;
import dev.gapfill.examples.demo.MoeCombine;
import dev.gapfill.examples.demo.MoeLayer;
import dev.gapfill.examples.demo.MoeLayer.Buffers;
import dev.gapfill.examples.demo.MoeLayer.Composition;
import dev.gapfill.examples.demo.MoeLayer.Tokens;
import dev.gapfill.examples.demo.MoeLayer.Weights;
import dev.gapfill.examples.demo.MoeLayerCheck;
import dev.gapfill.ops.GroupedGemm;
import dev.gapfill.ops.MoeRoute;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Lesson 05 — a mixture-of-experts layer is four calls, and none of them waits for the host.
 *
 * <ol>
 *   <li>{@link MoeRoute} turns router logits into the layout a grouped GEMM reads — per-expert row offsets, the token
 *   of each row, the router weight of each row, and {@code rowOf}, the way back — on the device.</li>
 *   <li>One {@link GroupedGemm} runs every expert's gate-up projection: rows gathered from the tokens, SwiGLU in the
 *   epilogue. The kernel reads the offsets on the device.</li>
 *   <li>A second runs the down projection and scales each row by its router weight.</li>
 *   <li>{@link MoeCombine} adds each token's k rows back together, in a fixed order.</li>
 * </ol>
 * Without Gapfill the grouped GEMMs become "copy the offsets to the host, then one cuBLAS GEMM per expert"
 * ({@code Backend.VENDOR}). Both are checked against the fp64 reference and timed against each other.
 */
public final class L05MoeLayer {
    private L05MoeLayer() {}

    public static void main(String[] args) {
        Device dev = Device.best();
        // 16 tokens through 64 experts, 8 per token, on a GPU; a tiny layer on the CPU reference backend
        MoeLayer.Config cfg = dev.isCuda() ? new MoeLayer.Config(64, 8, 2048, 1024, DType.BF16) : new MoeLayer.Config(8, 2, 64, 32, DType.BF16);
        int tokens = dev.isCuda() ? 16 : 4;
        System.out.println("05_moe_layer on " + dev + (dev.isCpu() ? " (no GPU: " + Gpu.status().reason() + ")" : "") + ": " + cfg.text()
                + " T=" + tokens);
        // on a GPU the bench harness owns the stream and times with CUDA events; on the CPU the wall clock does
        try (BenchContext ctx = dev.isCuda() ? new BenchContext(dev, 3, 20, false, m -> { }).fixedReps() : null) {
            DemoEnv env = ctx != null ? DemoEnv.gpu(ctx) : DemoEnv.cpu(5, m -> { });
            Stream s = env.stream();
            try (Weights w = Weights.random(cfg, dev, 5); Tokens in = Tokens.random(cfg, tokens, dev, 6);
                 Buffers ours = new Buffers(cfg, tokens, Composition.GAPFILL, dev);
                 Buffers theirs = new Buffers(cfg, tokens, Composition.VENDOR, dev)) {
                ours.poison(s);    // NaN everywhere: an output nobody wrote cannot pass the check
                theirs.poison(s);

                // The layer, spelled out (MoeLayer.forward makes the same four calls):
                MoeRoute.route(in.logits(), MoeRoute.Options.topK(cfg.topK()), ours.routing, s);
                GroupedGemm.run(in.x(), w.gateUp(), ours.routing.offsets,
                        GroupedGemm.Options.builder().gather(ours.routing.gather).swiglu(true).build(), ours.h, s);
                GroupedGemm.run(ours.h, w.down(), ours.routing.offsets,
                        GroupedGemm.Options.builder().rowScale(ours.routing.weights).build(), ours.y, s);
                MoeCombine.run(ours.y, ours.routing.rowOf, ours.out, s);

                MoeLayer.forward(w, in, theirs, s);  // the vendor composition: Backend.VENDOR grouped GEMMs
                env.sync();

                // Every output of both compositions, each op against its fp64 reference on the inputs it received.
                for (LayerCheck c : MoeLayerCheck.verify(w, in, List.of(ours, theirs))) {
                    System.out.printf("%s: checked %s against the fp64 reference: %s (out: max %d ulp)%n", c.path(), c.outputs(),
                            c.pass() ? "pass" : "FAIL " + c.failures(), c.outputUlp());
                    if (!c.pass()) {
                        throw new IllegalStateException("05_moe_layer: " + c.path() + " failed verification: " + c.failures());
                    }
                }

                LinkedHashMap<String, Runnable> paths = new LinkedHashMap<>();
                paths.put("vendor", () -> MoeLayer.forward(w, in, theirs, s));
                paths.put("gapfill", () -> MoeLayer.forward(w, in, ours, s));
                Map<String, Timing> t = env.time(paths);
                env.sync();
                double v = t.get("vendor").medianUs();
                double g = t.get("gapfill").medianUs();
                System.out.printf("measured (%s): vendor composition %.1f µs, Gapfill %.1f µs, %.2f× (%s)%n",
                        dev.isCuda() ? "GPU, median of 20, L2 flushed" : "CPU reference backend, wall clock", v, g, v / g,
                        dev.isCuda() ? MoeLayer.decisions(w, in, ours) : "both run the reference");
            }
        }
        System.out.println("05_moe_layer: OK");
    }
}
