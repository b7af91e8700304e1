package dev.gapfill.examples;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.ops.MoeRoute;
import dev.gapfill.verify.MoeRouteVerification;
import dev.gapfill.verify.Verdict;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * {@code gapfill verify} for moeRoute on random logits, with a random score (softmax or sigmoid) and renormalisation: every
 * output poisoned first; the layout outputs (offsets, gather, rowOf, topkIds) bit-exact against the reference, each
 * expert-order weight the bits of its choice's ({@link MoeRouteVerification#layoutMismatch}), and the router weights
 * against the fp64 reference ({@link MoeRouteVerification#topkWeights}). Until the forty-ninth session only offsets,
 * gather and rowOf were compared (and only the first two poisoned), under the default options.
 */
final class MoeRouteCheck implements OpChecks.OpCheck {
    @Override public String op() { return "moe_route"; }

    @Override public List<String> run(Device device, Random rnd, int firstCase, int cases, PrintWriter out, Stream stream) {
        List<String> failures = new ArrayList<>();
        for (int c = firstCase; c < firstCase + cases; c++) {
            int t = 1 + rnd.nextInt(2000);
            int e = new int[] {8, 60, 64, 128, 160, 256}[rnd.nextInt(6)];
            int k = 1 + rnd.nextInt(Math.min(8, e));
            MoeRoute.Options o = MoeRoute.Options.topK(k).withScore(rnd.nextBoolean() ? MoeRoute.Score.SOFTMAX : MoeRoute.Score.SIGMOID)
                    .withRenormalize(rnd.nextBoolean());
            String what = "moe_route T=" + t + " E=" + e + " k=" + k + " " + o.score() + (o.renormalize() ? " renormalized" : "");
            try (Tensor host = Poison.random(Device.CPU, DType.F16, rnd, t, e); Tensor logits = host.to(device);
                 MoeRoute.Routing ref = MoeRoute.route(host, o); MoeRoute.Routing got = MoeRoute.Routing.allocate(device, t, e, k)) {
                for (Tensor x : new Tensor[] {got.offsets, got.gather, got.rowOf, got.topkIds, got.weights, got.topkWeights}) {
                    x.fillBytes(0xff);  // -1 for the indices, NaN for the weights
                }
                OpChecks.beforeOp(device, stream);
                MoeRoute.route(logits, o, got, stream);
                String layout = MoeRouteVerification.layoutMismatch(ref, got);
                if (layout != null) {
                    failures.add(what + ": " + layout);
                }
                Verdict w = MoeRouteVerification.topkWeights(host, o, got.topkWeights);
                if (!w.pass()) {
                    failures.add(what + ": router weights " + w);
                }
            }
        }
        return failures;
    }
}
