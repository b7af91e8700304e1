package dev.gapfill.verify;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.GpuTest;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.core.testing.SystemProperty;
import dev.gapfill.ops.MoeRoute;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
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
            assertMatches(host, o, ref, got, "T=" + t + " E=" + e + " k=" + k);
        }
    }

    /**
     * The chunked sort (T·k ≥ 8192, ≥ 4096 where E ≥ 64: counts, bases and scatter over chunks, the counts kept in
     * rowOf) at its edges: just below and at both switches, E = 1, the largest E and k, a last chunk longer than the
     * others, and more than 1024 chunks' worth of entries (chunks of more than 1024 entries).
     */
    @Test
    void chunkedSortMatchesTheReferenceAtItsEdges() {
        int[][] cases = {{511, 64, 8}, {512, 64, 8}, {1023, 64, 8}, {4096, 63, 1}, {8191, 8, 1}, {8192, 1, 1}, {600, 512, 8}, {16384, 64, 8}, {5000, 512, 32}, {70001, 160, 6},
                         {4097, 8, 2}, {150001, 128, 8}};
        Device gpu = Device.cuda(0);
        for (int[] c : cases) {
            int t = c[0], e = c[1], k = c[2];
            MoeRoute.Options o = MoeRoute.Options.topK(k);
            try (Tensor host = Poison.random(Device.CPU, DType.BF16, new Random(31L * t + e), t, e); Tensor logits = host.to(gpu);
                 MoeRoute.Routing ref = MoeRoute.route(host, o);
                 MoeRoute.Routing got = MoeRoute.Routing.allocate(gpu, t, e, k)) {
                for (Tensor x : new Tensor[] {got.offsets, got.gather, got.weights, got.rowOf, got.topkIds, got.topkWeights}) {
                    Poison.fill(x);
                }
                MoeRoute.route(logits, o, got, null);
                assertMatches(host, o, ref, got, "T=" + t + " E=" + e + " k=" + k + " (" + MoeRoute.decide(t, e, k, Gpu.device(0).info()).variant() + ")");
            }
        }
    }

    /**
     * NaN logits (unsupported) are read as −∞ on both sides, so every chosen expert is in range (before, a row of
     * NaNs left the warp's argmax on no expert, which the sort then used as an index). Rows: all NaN, NaN among
     * finite logits, NaN beside −∞; in the one launch (T ≤ 16), the one-block sort and the chunked one. Integers exact
     * against the reference.
     */
    @Test
    void nanLogitsAreReadAsMinusInfinity() {
        Device gpu = Device.cuda(0);
        for (int[] c : new int[][] {{16, 64, 8}, {5, 33, 32}, {40, 64, 8}, {1500, 64, 8}}) {
            int t = c[0], e = c[1], k = c[2];
            Random rnd = new Random(t);
            float[] x = new float[t * e];
            for (int i = 0; i < x.length; i++) {
                x[i] = (float) rnd.nextGaussian();
            }
            for (int tok = 0; tok < t; tok++) {
                int kind = tok % 4;
                for (int j = 0; j < e; j++) {
                    boolean nan = kind == 0 || (kind == 1 && j % 3 == 0) || (kind == 2 && j < e / 2);
                    if (nan) {
                        x[tok * e + j] = Float.NaN;
                    } else if (kind == 2 && j < e / 2 + 4) {
                        x[tok * e + j] = Float.NEGATIVE_INFINITY;
                    }
                }
            }
            MoeRoute.Options o = MoeRoute.Options.topK(k);
            try (Tensor host = Tensor.of(Device.CPU, DType.F32, x, t, e); Tensor logits = host.to(gpu);
                 MoeRoute.Routing ref = MoeRoute.route(host, o);
                 MoeRoute.Routing got = MoeRoute.Routing.allocate(gpu, t, e, k)) {
                for (Tensor y : new Tensor[] {got.offsets, got.gather, got.rowOf, got.topkIds}) {
                    Poison.fill(y);
                }
                // the weights' poison is finite (0x7f bytes, about 3.4e38): a row of all-NaN logits has NaN weights in the
                // reference, which a NaN poison left unwritten would match (a read-only review, fiftieth session)
                got.weights.fillBytes(0x7f, null);
                got.topkWeights.fillBytes(0x7f, null);
                Stream.perThread(gpu).synchronize();
                MoeRoute.route(logits, o, got, null);
                String mismatch = MoeRouteVerification.layoutMismatch(ref, got);
                assertNull(mismatch, "NaN rows, T=" + t + ": " + mismatch);
                Verdict w = MoeRouteVerification.topkWeights(host, o, got.topkWeights);
                assertTrue(w.pass(), "NaN rows, T=" + t + ", weights: " + w);
            }
        }
    }

    /**
     * The one-launch path (T ≤ 16, 32 where E ≤ 64: one block selects and sorts) against the reference, and bit for bit against the two
     * launches it replaces (forced by {@link MoeRoute#DEBUG_TWO_LAUNCHES}): every output. Tokens from 1 to the limit and
     * past it (up to 64, the limit raised by {@link MoeRoute#DEBUG_ONE_LAUNCH_MAX_TOKENS}),
     * E from 1 to 512 (16 logits per lane), k up to 32 and k = E, the three dtypes, both scores, and per case and dtype
     * one of three kinds of logits: a few values with ±0 among them (the warp argmax breaks many ties and meets −0
     * beside +0), Gaussian, or one value for a whole row (every round a tie of all the experts left).
     */
    @Test
    void oneLaunchMatchesTheReferenceAndTheTwoLaunchesBits() {
        int[][] cases = {{1, 1, 1}, {1, 64, 8}, {2, 8, 2}, {5, 60, 6}, {7, 512, 8}, {15, 160, 6}, {16, 128, 8},
                         {16, 33, 32}, {16, 512, 32}, {16, 256, 16}, {16, 8, 2}, {3, 8, 8}, {16, 32, 32},
                         // past 16 tokens (the host's own limit up to 32 where E <= 64, else raised through
                         // MoeRoute.DEBUG_ONE_LAUNCH_MAX_TOKENS): 17-32 tokens two per warp in lockstep (a warp's
                         // second row a copy where it has one token), 40 and 64 in turn
                         {17, 64, 8}, {24, 160, 6}, {31, 8, 2}, {32, 128, 8}, {32, 256, 16}, {40, 64, 8}, {64, 33, 8}};
        Device gpu = Device.cuda(0);
        int n = 0;
        for (int[] c : cases) {
            int t = c[0], e = c[1], k = c[2];
            for (DType dt : new DType[] {DType.F32, DType.F16, DType.BF16}) {
                boolean sigmoid = (n & 1) == 1, renorm = (n & 2) == 0;
                int kind = (n / 3 + n) % 3;  // 0 ties, 1 Gaussian, 2 one value a row: each dtype meets each kind
                n++;
                MoeRoute.Options o = MoeRoute.Options.topK(k).withRenormalize(renorm)
                        .withScore(sigmoid ? MoeRoute.Score.SIGMOID : MoeRoute.Score.SOFTMAX);
                String limit = String.valueOf(Math.max(t, 16));  // the one launch for this T, whatever the default
                Random rnd = new Random(977L * t + 31L * e + k);
                float[] x = new float[t * e];
                for (int i = 0; i < x.length; i++) {
                    x[i] = kind == 0 ? new float[] {-0f, 0f, 0.5f, -1.25f, 2f}[rnd.nextInt(5)]
                            : kind == 1 ? (float) rnd.nextGaussian() : 0.25f * (i / e) - 1f;
                }
                String what = dt + " T=" + t + " E=" + e + " k=" + k + (sigmoid ? " sigmoid" : " softmax")
                        + (renorm ? " renormalized" : "") + new String[] {" ties", " gaussian", " constant rows"}[kind];
                try (Tensor host = Tensor.of(Device.CPU, dt, x, t, e); Tensor logits = host.to(gpu);
                     MoeRoute.Routing ref = MoeRoute.route(host, o);
                     MoeRoute.Routing one = MoeRoute.Routing.allocate(gpu, t, e, k);
                     MoeRoute.Routing two = MoeRoute.Routing.allocate(gpu, t, e, k)) {
                    for (MoeRoute.Routing r : new MoeRoute.Routing[] {one, two}) {
                        for (Tensor y : new Tensor[] {r.offsets, r.gather, r.weights, r.rowOf, r.topkIds, r.topkWeights}) {
                            Poison.fill(y);
                        }
                    }
                    SystemProperty.with(MoeRoute.DEBUG_ONE_LAUNCH_MAX_TOKENS, limit, () -> {
                        assertEquals("route_block", MoeRoute.decide(t, e, k, Gpu.device(0).info()).variant(), what);
                        MoeRoute.route(logits, o, one, null);
                    });
                    SystemProperty.with(MoeRoute.DEBUG_TWO_LAUNCHES, "true", () -> {
                        assertEquals("topk_warp+scatter_block", MoeRoute.decide(t, e, k, Gpu.device(0).info()).variant());
                        MoeRoute.route(logits, o, two, null);
                    });
                    assertMatches(host, o, ref, one, what);
                    Tensor[] a = {one.offsets, one.gather, one.rowOf, one.topkIds};
                    Tensor[] b = {two.offsets, two.gather, two.rowOf, two.topkIds};
                    for (int i = 0; i < a.length; i++) {
                        assertArrayEquals(b[i].toIntArray(), a[i].toIntArray(), what + ": integer output " + i + " of the one launch");
                    }
                    assertArrayEquals(bits(two.weights), bits(one.weights), what + ": weights of the one launch");
                    assertArrayEquals(bits(two.topkWeights), bits(one.topkWeights), what + ": topkWeights of the one launch");
                }
            }
        }
    }

    private static int[] bits(Tensor f32) {
        float[] x = f32.toFloatArray();
        int[] b = new int[x.length];
        for (int i = 0; i < x.length; i++) {
            b[i] = Float.floatToRawIntBits(x[i]);
        }
        return b;
    }

    /** Integers exact, each expert-order weight the very bits of its choice's, and topkWeights within the bound. */
    private static void assertMatches(Tensor host, MoeRoute.Options o, MoeRoute.Routing ref, MoeRoute.Routing got, String what) {
        String mismatch = MoeRouteVerification.layoutMismatch(ref, got);
        assertNull(mismatch, what + ": " + mismatch);
        Verdict v = MoeRouteVerification.topkWeights(host, o, got.topkWeights);
        assertTrue(v.pass(), what + ": " + v);
    }
}
