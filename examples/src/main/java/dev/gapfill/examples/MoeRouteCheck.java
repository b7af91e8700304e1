package dev.gapfill.examples;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.ops.MoeRoute;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/** {@code gapfill verify} for moeRoute: integer outputs bit-exact against the reference on random logits. */
final class MoeRouteCheck implements OpChecks.OpCheck {
    @Override public String op() { return "moe_route"; }

    @Override public List<String> run(Device device, Random rnd, int firstCase, int cases, PrintWriter out, Stream stream) {
        List<String> failures = new ArrayList<>();
        for (int c = firstCase; c < firstCase + cases; c++) {
            int t = 1 + rnd.nextInt(2000);
            int e = new int[] {8, 60, 64, 128, 160, 256}[rnd.nextInt(6)];
            int k = 1 + rnd.nextInt(Math.min(8, e));
            MoeRoute.Options o = MoeRoute.Options.topK(k);
            try (Tensor host = Poison.random(Device.CPU, DType.F16, rnd, t, e); Tensor logits = host.to(device);
                 MoeRoute.Routing ref = MoeRoute.route(host, o); MoeRoute.Routing got = MoeRoute.Routing.allocate(device, t, e, k)) {
                got.gather.fillBytes(0xff);
                got.offsets.fillBytes(0xff);
                OpChecks.beforeOp(device, stream);
                MoeRoute.route(logits, o, got, stream);
                if (!Arrays.equals(ref.offsets.toIntArray(), got.offsets.toIntArray())
                        || !Arrays.equals(ref.gather.toIntArray(), got.gather.toIntArray())
                        || !Arrays.equals(ref.rowOf.toIntArray(), got.rowOf.toIntArray())) {
                    failures.add("moe_route T=" + t + " E=" + e + " k=" + k + ": layout differs from the reference");
                }
            }
        }
        return failures;
    }
}
