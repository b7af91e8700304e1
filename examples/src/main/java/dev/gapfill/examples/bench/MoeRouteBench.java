package dev.gapfill.examples.bench;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.ops.MoeRoute;
import dev.gapfill.verify.MoeRouteVerification;
import dev.gapfill.verify.Verdict;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/** moeRoute at the MoE configurations of the groupedGemm sweep. Custom only: no vendor library routes. */
public final class MoeRouteBench implements BenchSuite {
    @Override public String op() { return "moe_route"; }

    @Override public List<BenchRow> run(BenchContext ctx) {
        List<BenchRow> rows = ctx.rows(op());
        int[][] configs = {{64, 8}, {128, 8}, {160, 6}, {8, 2}};
        int[] tokens = ctx.quick() ? new int[] {16, 4096} : new int[] {1, 16, 32, 64, 512, 4096, 16384};
        Random rnd = new Random(5);
        for (int[] c : configs) {
            for (int t : tokens) {
                int e = c[0];
                int k = c[1];
                MoeRoute.Options o = MoeRoute.Options.topK(k);
                try (Tensor host = Poison.random(Device.CPU, DType.BF16, rnd, t, e); Tensor logits = host.to(ctx.device());
                     MoeRoute.Routing ref = MoeRoute.route(host, o);
                     MoeRoute.Routing got = MoeRoute.Routing.allocate(ctx.device(), t, e, k)) {
                    for (Tensor x : new Tensor[] {got.offsets, got.gather, got.weights, got.rowOf, got.topkIds, got.topkWeights}) {
                        Poison.fill(x, ctx.stream());  // NaN weights, -2139062144 for the integer outputs
                    }
                    MoeRoute.route(logits, o, got, ctx.stream());
                    ctx.stream().synchronize();
                    // integers exact, each row's weight the very bits of its choice's, and topkWeights within the fp32
                    // softmax bound of MoeRouteGpuTest
                    String mismatch = MoeRouteVerification.layoutMismatch(ref, got);
                    if (mismatch != null) {
                        ctx.progress("moe_route MISMATCH: " + mismatch);
                    }
                    boolean exact = mismatch == null;
                    Verdict wv = MoeRouteVerification.topkWeights(host, o, got.topkWeights);
                    boolean pass = exact && wv.pass();
                    LinkedHashMap<String, Runnable> paths = new LinkedHashMap<>();
                    paths.put("custom", () -> MoeRoute.route(logits, o, got, ctx.stream()));
                    Timing tm = ctx.timeInterleaved(paths).get("custom");
                    long bytes = (long) t * e * 2 + (long) (e + 1) * 4 + (long) t * k * (4 + 4 + 4 + 4 + 4);
                    Map<String, double[]> spread = new LinkedHashMap<>();
                    spread.put("custom", new double[] {tm.p10Us(), tm.p90Us()});
                    rows.add(new BenchRow(op(), "BF16", BenchRow.shape("tokens", t, "experts", e, "top_k", k), "route", null,
                            tm.medianUs(), tm.medianUs(), "CUSTOM/" + MoeRoute.decide(t, e, k, ctx.info()).variant(), ctx.floorUs(bytes, 0, 0), bytes,
                            (double) t * e * 4, Map.of(), spread,
                            new BenchRow.Check("reference (all six outputs: integers exact, topkWeights within the fp32 softmax bound)",
                                    exact && wv.bitExact(), wv.maxUlp(), wv.maxRelErr(), pass)));
                    ctx.progress(String.format("moe_route T=%d E=%d k=%d: %.1f us %s", t, e, k, tm.medianUs(), pass ? "" : "MISMATCH"));
                }
            }
        }
        return rows;
    }
}
