package dev.gapfill.examples.lessons;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.examples.bench.BenchContext;
import dev.gapfill.examples.bench.Timing;
import dev.gapfill.examples.demo.CudaGraph;
import dev.gapfill.examples.demo.DecodeStep;
import dev.gapfill.examples.demo.DemoEnv;
import dev.gapfill.examples.demo.LayerCheck;
import dev.gapfill.ops.Backend;
import dev.gapfill.verify.AttentionTolerance;
import dev.gapfill.ops.GqaDecode;
import dev.gapfill.ops.GqaDecodePlan;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Lesson 06 — plan a decode step once, capture it in a CUDA graph, replay it while the sequences grow.
 *
 * <ol>
 *   <li>{@link GqaDecode#plan} does everything that depends only on the shape — validation, the split count, the
 *   workspace — once. {@link GqaDecodePlan#run} only launches kernels.</li>
 *   <li>Because {@code run} allocates nothing and never waits for the host, it can be captured in a CUDA graph, and
 *   each step becomes one {@code cudaGraphLaunch}.</li>
 *   <li>A graph keeps addresses, not values: the lengths live in a device buffer, and each step writes the new
 *   lengths into it (in stream order) before the replay. The cache is paged, its pages in random order.</li>
 * </ol>
 * The vendor composition (cuBLAS scores, cuDNN softmax, cuBLAS P·V, a gather of the pages first) runs normally. Both
 * are checked against the fp64 reference and timed per step.
 */
public final class L06DecodeStep {
    private L06DecodeStep() {}

    public static void main(String[] args) {
        Device dev = Device.best();
        // 4 sequences of ~4000 positions, 32 query heads over 8 KV heads, on a GPU; a small cache on the CPU
        DecodeStep.Config cfg = dev.isCuda() ? new DecodeStep.Config(4, 4096, 32, 8, 128, 16, DType.BF16)
                : new DecodeStep.Config(2, 128, 8, 2, 64, 16, DType.BF16);
        System.out.println("06_decode_step on " + dev + (dev.isCpu() ? " (no GPU: " + Gpu.status().reason() + ")" : "") + ": "
                + cfg.text() + ", " + DecodeStep.STEPS + " steps");
        try (BenchContext ctx = dev.isCuda() ? new BenchContext(dev, 3, DecodeStep.STEPS, false, m -> { }).fixedReps() : null) {
            DemoEnv env = ctx != null ? DemoEnv.gpu(ctx) : DemoEnv.cpu(DecodeStep.STEPS, m -> { });
            Stream s = env.stream();
            try (DecodeStep d = DecodeStep.random(cfg, dev, 6);
                 Tensor out = Tensor.empty(dev, cfg.dtype(), s, cfg.batch(), cfg.qHeads(), cfg.headDim());
                 Tensor lse = Tensor.empty(dev, DType.F32, s, cfg.batch(), cfg.qHeads());
                 Tensor outV = Tensor.empty(dev, cfg.dtype(), s, cfg.batch(), cfg.qHeads(), cfg.headDim());
                 Tensor lseV = Tensor.empty(dev, DType.F32, s, cfg.batch(), cfg.qHeads());
                 GqaDecodePlan plan = GqaDecode.plan(cfg.problem(), dev, GqaDecode.Options.defaults(), s);
                 GqaDecodePlan vendor = GqaDecode.plan(cfg.problem(), dev, GqaDecode.Options.defaults().withBackend(Backend.VENDOR), s)) {
                System.out.println("plan: " + plan);
                Runnable step = () -> plan.run(d.q, d.cache, d.lens, out, lse, s);
                CudaGraph graph = null;
                if (dev.isCuda()) {
                    step.run();                               // once outside the capture (creates per-thread handles)
                    s.synchronize();
                    graph = CudaGraph.capture(s, step);       // the split-KV kernel and the merge, recorded once
                }
                try {
                    CudaGraph g = graph;
                    Runnable replay = g != null ? () -> g.launch(s) : step;  // no graphs on the CPU: run the plan
                    for (int i = 0; i < DecodeStep.STEPS; i++) {
                        d.setStep(i, s);                      // this step's lengths, written on the device
                        replay.run();                         // the whole step, no host work
                    }
                    env.sync();
                    System.out.println("ran " + DecodeStep.STEPS + " steps, lengths " + java.util.Arrays.toString(d.lengths(0)) + " → "
                            + java.util.Arrays.toString(d.lengths(DecodeStep.STEPS - 1)) + (g != null ? ", one graph replay each" : ""));

                    // The same 64 steps again with poisoned outputs; steps 0, 31 and 63 against the fp64 reference.
                    // both GPU paths round the probabilities P to the cache dtype before P·V; the bound says so
                    boolean vendorRounds = AttentionTolerance.roundsProbabilities(vendor.decision().backend());
                    boolean gapfillRounds = AttentionTolerance.roundsProbabilities(plan.decision().backend());
                    for (LayerCheck c : List.of(d.verify("gapfill", replay, out, lse, s, plan.scale(), gapfillRounds),
                            d.verify("vendor", () -> vendor.run(d.q, d.cache, d.lens, outV, lseV, s), outV, lseV, s, vendor.scale(),
                                    vendorRounds))) {
                        System.out.printf("%s: checked %s: %s (out: max %d ulp)%n", c.path(), c.outputs(), c.pass() ? "pass" : "FAIL " + c.failures(),
                                c.outputUlp());
                        if (!c.pass()) {
                            throw new IllegalStateException("06_decode_step: " + c.path() + " failed verification: " + c.failures());
                        }
                    }

                    LinkedHashMap<String, Runnable> paths = new LinkedHashMap<>();
                    paths.put("vendor", d.advancing(s, () -> vendor.run(d.q, d.cache, d.lens, outV, lseV, s)));
                    paths.put("gapfill", d.advancing(s, replay));
                    Map<String, Timing> t = env.time(paths);
                    env.sync();
                    double v = t.get("vendor").medianUs();
                    double gf = t.get("gapfill").medianUs();
                    System.out.printf("measured per step (%s): vendor composition %.1f µs, Gapfill %.1f µs, %.2f×%n",
                            dev.isCuda() ? "GPU, median over the 64 steps, L2 flushed" : "CPU reference backend, wall clock", v, gf, v / gf);
                } finally {
                    env.sync();
                    if (graph != null) {
                        graph.close();
                    }
                }
            }
        }
        System.out.println("06_decode_step: OK");
    }
}
