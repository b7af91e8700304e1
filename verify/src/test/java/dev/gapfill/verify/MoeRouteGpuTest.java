package dev.gapfill.verify;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.GpuTest;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.ops.MoeRoute;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * GPU routing against the CPU reference: integer outputs (offsets, gather, rowOf, topkIds) bit-exact —
 * selection compares raw logits with the same tie rule — and weights within the fp32 softmax bound:
 * |w − ref| ≤ u·|ref| + 2·γ_K·|ref| with K = E + k + 16 + ⌈max|x − m|⌉ (the exponent's argument error,
 * E-term sum, division and renormalisation). F16/BF16 logits make ties common, so tie-breaking is tested.
 */
@GpuTest
class MoeRouteGpuTest {
    @Property(tries = 60)
    void matchesTheReference(@ForAll @IntRange(min = 1, max = 4000) int t, @ForAll @IntRange(min = 0, max = 7) int eIndex,
                             @ForAll @IntRange(min = 1, max = 8) int kk, @ForAll boolean sigmoid, @ForAll boolean renorm,
                             @ForAll long seed) {
        int e = new int[] {1, 8, 33, 60, 64, 128, 160, 512}[eIndex];
        int k = Math.min(kk, e);
        DType dt = new DType[] {DType.F32, DType.F16, DType.BF16}[(int) Math.floorMod(seed, 3L)];
        MoeRoute.Options o = MoeRoute.Options.topK(k).withRenormalize(renorm)
                .withScore(sigmoid ? MoeRoute.Score.SIGMOID : MoeRoute.Score.SOFTMAX);
        Device gpu = Device.cuda(0);
        try (Tensor host = Poison.random(Device.CPU, dt, new Random(seed), t, e); Tensor logits = host.to(gpu);
             MoeRoute.Routing ref = MoeRoute.route(host, o);
             MoeRoute.Routing got = MoeRoute.Routing.allocate(gpu, t, e, k)) {
            for (Tensor x : new Tensor[] {got.offsets, got.gather, got.weights, got.rowOf, got.topkIds, got.topkWeights}) {
                Poison.fill(x);  // NaN weights, -2139062144 for the integer outputs (never a legal index)
            }
            MoeRoute.route(logits, o, got, null);
            assertArrayEquals(ref.topkIds.toIntArray(), got.topkIds.toIntArray(), "topkIds");
            assertArrayEquals(ref.offsets.toIntArray(), got.offsets.toIntArray(), "offsets");
            assertArrayEquals(ref.gather.toIntArray(), got.gather.toIntArray(), "gather");
            assertArrayEquals(ref.rowOf.toIntArray(), got.rowOf.toIntArray(), "rowOf");
            Verdict v = MoeRouteVerification.topkWeights(host, o, got.topkWeights);
            assertTrue(v.pass(), v.toString());
        }
    }
}
