package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.core.testing.SystemProperty;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static dev.gapfill.ops.ValidationRule.*;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The reference's invariants (the layout grouped GEMM relies on) and validation. CPU only. */
class MoeRouteProperties {
    @Property(tries = 80)
    void layoutIsConsistent(@ForAll @IntRange(min = 1, max = 300) int t, @ForAll @IntRange(min = 1, max = 130) int e,
                            @ForAll @IntRange(min = 1, max = 8) int kk, @ForAll boolean sigmoid, @ForAll long seed) {
        int k = Math.min(kk, e);
        DType dt = new DType[] {DType.F32, DType.F16, DType.BF16}[(int) Math.floorMod(seed, 3L)];
        try (Tensor logits = Poison.random(Device.CPU, dt, new Random(seed), t, e);
             MoeRoute.Routing r = MoeRoute.route(logits, MoeRoute.Options.topK(k).withScore(sigmoid ? MoeRoute.Score.SIGMOID : MoeRoute.Score.SOFTMAX))) {
            int[] off = r.offsets.toIntArray();
            int[] gather = r.gather.toIntArray();
            int[] rowOf = r.rowOf.toIntArray();
            int[] ids = r.topkIds.toIntArray();
            float[] w = r.weights.toFloatArray();
            float[] tw = r.topkWeights.toFloatArray();
            assertEquals(0, off[0]);
            assertEquals(t * k, off[e]);
            boolean[] used = new boolean[t * k];
            for (int tok = 0; tok < t; tok++) {
                double sum = 0;
                for (int j = 0; j < k; j++) {
                    int row = rowOf[tok * k + j];
                    int x = ids[tok * k + j];
                    assertTrue(off[x] <= row && row < off[x + 1], "row inside its expert's range");
                    assertEquals(tok, gather[row]);
                    assertEquals(tw[tok * k + j], w[row]);
                    assertTrue(!used[row]);
                    used[row] = true;
                    sum += tw[tok * k + j];
                    for (int j2 = 0; j2 < j; j2++) {
                        assertTrue(ids[tok * k + j2] != x, "distinct experts per token");
                        assertTrue(logits.getDouble((long) tok * e + ids[tok * k + j2]) >= logits.getDouble((long) tok * e + x), "descending");
                    }
                }
                assertEquals(1.0, sum, 1e-5, "renormalised weights sum to 1");
            }
            for (int x = 0; x < e; x++) {
                for (int row = off[x] + 1; row < off[x + 1]; row++) {
                    assertTrue(gather[row - 1] <= gather[row], "token order inside an expert");
                }
            }
        }
    }

    @Test void validationNamesTheArgument() {
        try (Tensor logits = Tensor.of(Device.CPU, DType.F32, new float[12], 3, 4)) {
            assertEquals("options.topK", assertThrows(ArgumentException.class, () -> MoeRoute.route(logits, MoeRoute.Options.topK(5))).argument());
            assertEquals("options.topK", assertThrows(ArgumentException.class, () -> MoeRoute.route(logits, MoeRoute.Options.topK(0))).argument());
            try (MoeRoute.Routing wrong = MoeRoute.Routing.allocate(Device.CPU, 3, 5, 2)) {
                assertEquals("out.offsets", assertThrows(ArgumentException.class,
                        () -> MoeRoute.route(logits, MoeRoute.Options.topK(2), wrong, null)).argument());
            }
        }
        try (Tensor big = Tensor.empty(Device.CPU, DType.F32, 1, 513)) {
            assertEquals("logits", assertThrows(ArgumentException.class, () -> MoeRoute.route(big, MoeRoute.Options.topK(2))).argument());
        }
        // T·k within 1024 of 2^31: the kernels' loop steps would wrap past the last entry (refused before allocating)
        assertEquals("tokens", assertThrows(ArgumentException.class, () -> MoeRoute.Routing.allocate(Device.CPU, 1073741823, 8, 2)).argument());
        assertEquals("tokens", assertThrows(ArgumentException.class,
                () -> MoeRoute.Routing.allocate(Device.CPU, (int) (MoeRoute.MAX_ENTRIES / 2 + 1), 8, 2)).argument());
    }

    /** Backend's contract: tensors on the CPU always run the reference, VENDOR (per call or by property) included. */
    @Test void cpuTensorsRunTheReferenceWhateverTheBackend() {
        Random rnd = new Random(11);
        try (Tensor logits = Poison.random(Device.CPU, DType.F16, rnd, 5, 9);
             MoeRoute.Routing auto = MoeRoute.route(logits, MoeRoute.Options.topK(3));
             MoeRoute.Routing vendor = MoeRoute.route(logits, MoeRoute.Options.topK(3).withBackend(Backend.VENDOR))) {
            assertRoutingEquals(auto, vendor);
            try (MoeRoute.Routing out = MoeRoute.Routing.allocate(Device.CPU, 5, 9, 3)) {
                MoeRoute.route(logits, MoeRoute.Options.topK(3).withBackend(Backend.VENDOR), out, null);
                assertRoutingEquals(auto, out);
            }
            System.setProperty(Backend.PROPERTY, "vendor");
            try (MoeRoute.Routing byProperty = MoeRoute.route(logits, MoeRoute.Options.topK(3))) {
                assertRoutingEquals(auto, byProperty);
            } finally {
                System.clearProperty(Backend.PROPERTY);
            }
        }
    }

    /**
     * The chunked sort's geometry (route.cu keeps each chunk's E counts at its own first entries of rowOf): every
     * chunk holds at least MAX_EXPERTS entries, the last one fewer than two chunks' worth, and the bases step walks
     * at most 1024 chunks; the decision names the path that runs.
     */
    @Property(tries = 300)
    void chunksHoldTheirCountsAndStayFew(@ForAll @IntRange(min = MoeRoute.CHUNKED_FROM_E64, max = Integer.MAX_VALUE) int entries) {
        int chunk = MoeRoute.chunkEntries(entries);
        int chunks = entries / chunk;
        assertTrue(chunk >= MoeRoute.MAX_EXPERTS, "chunk " + chunk);
        assertTrue(chunks >= 1 && chunks <= 1024, entries + " entries: " + chunks + " chunks");
        long last = entries - (long) (chunks - 1) * chunk;
        assertTrue(last >= chunk && last < 2L * chunk, entries + " entries: last chunk " + last + " of " + chunk);
    }

    /** The reference reads a NaN logit as −∞ (route.cu does the same): the choices equal those of the −∞ rows. */
    @Test void nanLogitsOrderLikeMinusInfinity() {
        int t = 12, e = 10, k = 4;
        Random rnd = new Random(7);
        float[] withNan = new float[t * e];
        float[] withInf = new float[t * e];
        for (int i = 0; i < withNan.length; i++) {
            boolean nan = i % 3 == 0 || i / e == 5;
            withNan[i] = nan ? Float.NaN : (float) rnd.nextGaussian();
            withInf[i] = nan ? Float.NEGATIVE_INFINITY : withNan[i];
        }
        try (Tensor a = Tensor.of(Device.CPU, DType.F32, withNan, t, e); Tensor b = Tensor.of(Device.CPU, DType.F32, withInf, t, e);
             MoeRoute.Routing ra = MoeRoute.route(a, MoeRoute.Options.topK(k)); MoeRoute.Routing rb = MoeRoute.route(b, MoeRoute.Options.topK(k))) {
            assertArrayEquals(rb.topkIds.toIntArray(), ra.topkIds.toIntArray());
            assertArrayEquals(rb.rowOf.toIntArray(), ra.rowOf.toIntArray());
            int[] ids = ra.topkIds.toIntArray();
            for (int j = 0; j < k; j++) {
                assertEquals(j, ids[5 * k + j], "an all-NaN row takes the lowest experts");
            }
        }
    }

    /** The top-k warp's logits per lane cover every expert, with no slot to spare beyond the power of two. */
    @Property(tries = 200)
    void topkSlotsCoverTheExperts(@ForAll @IntRange(min = 1, max = MoeRoute.MAX_EXPERTS) int e) {
        int slots = MoeRoute.topkSlots(e);
        assertTrue(32L * slots >= e, e + " experts, " + slots + " slots");
        assertTrue(slots == 1 || 32L * (slots / 2) < e, e + " experts, " + slots + " slots");
        assertTrue(Integer.bitCount(slots) == 1 && slots <= 16, e + " experts, " + slots + " slots");
    }

    /** Under gapfill.backend=vendor route() refuses device tensors, and the decision says so instead of naming a kernel. */
    @Test void theDecisionRefusesAVendorOverrideAsTheRunDoes() {
        DeviceInfo h100 = DeviceInfo.h100ForTests();
        SystemProperty.with(Backend.PROPERTY, "vendor", () -> {
            assertEquals("backend", assertThrows(dev.gapfill.core.UnsupportedShapeException.class, () -> MoeRoute.decide(16, 64, 8, h100)).argument());
            assertEquals(Backend.REFERENCE, MoeRoute.decide(16, 64, 8, null).backend());  // no device: the reference
        });
        SystemProperty.with(Backend.PROPERTY, "custom", () -> assertEquals("route_block", MoeRoute.decide(16, 64, 8, h100).variant()));
    }

    @Test void theDecisionNamesTheSortThatRuns() {
        DeviceInfo h100 = DeviceInfo.h100ForTests();
        assertEquals("route_block", MoeRoute.decide(1, 512, 32, h100).variant());
        assertEquals("route_block", MoeRoute.decide(16, 512, 32, h100).variant());
        assertEquals("topk_warp+scatter_block", MoeRoute.decide(17, 65, 8, h100).variant());
        assertEquals("route_block", MoeRoute.decide(17, 8, 2, h100).variant());  // E <= 64: pairs up to 32 tokens
        assertTrue(MoeRoute.decide(32, 64, 8, h100).reason().contains("two tokens per warp in lockstep"),
                MoeRoute.decide(32, 64, 8, h100).reason());
        assertEquals("topk_warp+scatter_block", MoeRoute.decide(33, 64, 8, h100).variant());
        assertTrue(MoeRoute.decide(16, 64, 8, h100).reason().contains("one warp per token) and sorts the 128 entries"),
                MoeRoute.decide(16, 64, 8, h100).reason());
        SystemProperty.with(MoeRoute.DEBUG_ONE_LAUNCH_MAX_TOKENS, "64", () -> {
            assertTrue(MoeRoute.decide(32, 512, 8, h100).reason().contains("two tokens per warp in lockstep"),
                    MoeRoute.decide(32, 512, 8, h100).reason());
            assertTrue(MoeRoute.decide(40, 64, 8, h100).reason().contains("up to 3 tokens per warp in turn"),
                    MoeRoute.decide(40, 64, 8, h100).reason());
            assertEquals("topk_warp+scatter_block", MoeRoute.decide(65, 64, 8, h100).variant());
        });
        SystemProperty.with(MoeRoute.DEBUG_TWO_LAUNCHES, "true",
                () -> assertEquals("topk_warp+scatter_block", MoeRoute.decide(1, 64, 8, h100).variant()));
        assertEquals("topk_warp+scatter_block", MoeRoute.decide(511, 64, 8, h100).variant());
        assertEquals("topk_warp+scatter_chunks", MoeRoute.decide(512, 64, 8, h100).variant());
        assertTrue(MoeRoute.decide(512, 512, 8, h100).reason().contains("(at least 4096)"), MoeRoute.decide(512, 512, 8, h100).reason());
        assertEquals("topk_warp+scatter_block", MoeRoute.decide(4096, 63, 1, h100).variant());
        assertEquals("topk_warp+scatter_block", MoeRoute.decide(8191, 8, 1, h100).variant());
        assertEquals("topk_warp+scatter_chunks", MoeRoute.decide(8192, 8, 1, h100).variant());
        assertTrue(MoeRoute.decide(16384, 64, 8, h100).reason().contains("128 chunks of 1024"), MoeRoute.decide(16384, 64, 8, h100).reason());
        assertEquals(Backend.REFERENCE, MoeRoute.decide(16384, 64, 8, null).backend());
    }

    @Test void decideRefusesTokenCountsWhoseEntriesPassThe32BitLimitEvenWhereTheProductWraps() {
        DeviceInfo h100 = DeviceInfo.h100ForTests();
        long limit = MoeRoute.MAX_ENTRIES / 8;  // the largest T with T·8 <= 2^31 - 1025
        assertEquals("topk_warp+scatter_chunks", MoeRoute.decide(limit, 64, 8, h100).variant());
        for (long t : new long[] {limit + 1, 1L << 40, 1L << 61, Long.MAX_VALUE}) {  // 2^61 · 8 wraps to 0
            for (DeviceInfo info : new DeviceInfo[] {h100, null}) {
                assertEquals("tokens", assertThrows(ArgumentException.class, () -> MoeRoute.decide(t, 64, 8, info)).argument(), t + " " + info);
            }
        }
    }

    private static void assertRoutingEquals(MoeRoute.Routing expected, MoeRoute.Routing got) {
        Tensor[] e = all(expected);
        Tensor[] g = all(got);
        for (int i = 0; i < e.length; i++) {
            assertArrayEquals(bytes(e[i]), bytes(g[i]), FIELDS[i]);
        }
    }

    private static byte[] bytes(Tensor t) {
        java.nio.ByteBuffer b = t.toRaw();
        byte[] a = new byte[b.remaining()];
        b.get(a);
        return a;
    }

    // ------------------------------------------------------------------ every validation rule, on random problems

    private static final DType[] FLOATS = {DType.F32, DType.F16, DType.BF16};

    /** The six output tensors of a Routing, by name, dtype and shape for T tokens, E experts, k choices. */
    private static final String[] FIELDS = {"offsets", "gather", "weights", "rowOf", "topkIds", "topkWeights"};

    private static long[][] shapes(long t, long e, long k) {
        return new long[][] {{e + 1}, {t * k}, {t * k}, {t, k}, {t, k}, {t, k}};
    }

    private static DType fieldType(int i) { return i == 2 || i == 5 ? DType.F32 : DType.I32; }

    private static MoeRoute.Routing replace(MoeRoute.Routing r, int field, Tensor t) {
        Tensor[] all = {r.offsets, r.gather, r.weights, r.rowOf, r.topkIds, r.topkWeights};
        all[field] = t;
        return new MoeRoute.Routing(all[0], all[1], all[2], all[3], all[4], all[5]);
    }

    /** Outputs on a fixture (closed with it). */
    static MoeRoute.Routing outputs(Fixture f, long t, long e, long k) {
        long[][] sh = shapes(t, e, k);
        return new MoeRoute.Routing(f.poisoned(DType.I32, sh[0]), f.poisoned(DType.I32, sh[1]), f.poisoned(DType.F32, sh[2]),
                f.poisoned(DType.I32, sh[3]), f.poisoned(DType.I32, sh[4]), f.poisoned(DType.F32, sh[5]));
    }

    private static void add(RuleCheck.Cases c, MoeRoute.Routing base, ValidationRule r, Tensor logits, MoeRoute.Options o, MoeRoute.Routing out) {
        c.add(r, "route(logits, options, out, stream)", () -> MoeRoute.route(logits, o, out, null));
        if (out == base) {
            c.add(r, "route(logits, options)", () -> RuleCheck.discard(MoeRoute.route(logits, o)));
        }
    }

    /** Every MoeRoute rule on logits [t, e] with k choices; GPU-only rules on a GPU fixture. */
    static RuleCheck.Cases cases(Fixture f, DType dt, Tensor logits, MoeRoute.Options o, MoeRoute.Routing out) {
        RuleCheck.Cases c = new RuleCheck.Cases();
        java.util.Random rnd = f.rnd;
        long t = logits.dim(0);
        long e = logits.dim(1);
        int k = o.topK();
        add(c, out, MR_LOGITS_NULL, null, o, out);
        add(c, out, MR_LOGITS_CLOSED, f.closed(dt, t, e), o, out);
        add(c, out, MR_LOGITS_RANK, f.random(dt, rnd.nextBoolean() ? new long[] {t * e} : new long[] {1, t, e}), o, out);
        add(c, out, MR_LOGITS_DTYPE, f.random(rnd.nextBoolean() ? DType.I8 : DType.I32, t, e), o, out);
        c.whereStridable(MR_LOGITS_CONTIGUOUS, () -> add(c, out, MR_LOGITS_CONTIGUOUS, f.strided(dt, t, e), o, out), t, e);
        add(c, out, MR_OPTIONS_NULL, logits, null, out);
        int badK = rnd.nextBoolean() ? -rnd.nextInt(3) : (int) Math.min(e, MoeRoute.MAX_TOP_K) + 1 + rnd.nextInt(3);
        add(c, out, MR_TOPK, logits, new MoeRoute.Options(badK, o.score(), o.renormalize(), o.backend()), out);
        add(c, out, MR_SCORE_NULL, logits, o.withScore(null), out);
        add(c, out, MR_BACKEND, logits, o.withBackend(rnd.nextBoolean() ? null : Backend.REFERENCE), out);
        // VENDOR has no implementation for device tensors (CPU tensors run the reference): device-side tensors, on the
        // CPU fake ones that the check rejects before any device access
        Fixture d = f.deviceSide();
        Tensor dLogits = d.random(dt, t, e);
        MoeRoute.Routing dOut = outputs(d, t, e, k);
        MoeRoute.Options vendor = o.withBackend(Backend.VENDOR);
        c.add(MR_VENDOR, "route(logits, options, out, stream)", () -> MoeRoute.route(dLogits, vendor, dOut, null));
        c.add(MR_VENDOR, "route(logits, options)", () -> RuleCheck.discard(MoeRoute.route(dLogits, vendor)));
        long eBig = MoeRoute.MAX_EXPERTS + 1 + rnd.nextInt(100);
        Tensor wide = f.random(dt, 1, eBig);
        MoeRoute.Routing wideOut = outputs(f, 1, eBig, k);
        c.add(MR_EXPERTS_MAX, "route(logits, options, out, stream)", () -> MoeRoute.route(wide, o, wideOut, null));
        c.add(MR_EXPERTS_MAX, "route(logits, options)", () -> RuleCheck.discard(MoeRoute.route(wide, o)));
        Fixture big = f.fakes();
        long tBig = (1L << 31) / 32 + rnd.nextInt(1000);
        Tensor huge = big.fake(DType.F16, tBig, 32);
        MoeRoute.Options k32 = MoeRoute.Options.topK(32);
        c.add(MR_TOKENS_INT32, "route(logits, options, out, stream)", () -> MoeRoute.route(huge, k32, out, null));
        c.add(MR_TOKENS_INT32, "route(logits, options)", () -> RuleCheck.discard(MoeRoute.route(huge, k32)));
        c.add(MR_DECIDE_TOKENS_INT32, "decide(tokens, experts, k, info)", () -> MoeRoute.decide(tBig, 32, 32, null));
        long wraps = (1L << 61) + rnd.nextInt(8) * 8;  // · 8 wraps past 2^64 to a small product
        c.add(MR_DECIDE_TOKENS_INT32, "decide(tokens, experts, k, info)", () -> MoeRoute.decide(wraps, 32, 8, DeviceInfo.h100ForTests()));
        c.add(MR_OUT_NULL, "route(logits, options, out, stream)", () -> MoeRoute.route(logits, o, null, null));
        ValidationRule[][] byField = {
            {MR_OFFSETS_CLOSED, MR_OFFSETS_DTYPE, MR_OFFSETS_DEVICE, MR_OFFSETS_CONTIGUOUS, MR_OFFSETS_SHAPE},
            {MR_GATHER_CLOSED, MR_GATHER_DTYPE, MR_GATHER_DEVICE, MR_GATHER_CONTIGUOUS, MR_GATHER_SHAPE},
            {MR_WEIGHTS_CLOSED, MR_WEIGHTS_DTYPE, MR_WEIGHTS_DEVICE, MR_WEIGHTS_CONTIGUOUS, MR_WEIGHTS_SHAPE},
            {MR_ROWOF_CLOSED, MR_ROWOF_DTYPE, MR_ROWOF_DEVICE, MR_ROWOF_CONTIGUOUS, MR_ROWOF_SHAPE},
            {MR_IDS_CLOSED, MR_IDS_DTYPE, MR_IDS_DEVICE, MR_IDS_CONTIGUOUS, MR_IDS_SHAPE},
            {MR_TOPKW_CLOSED, MR_TOPKW_DTYPE, MR_TOPKW_DEVICE, MR_TOPKW_CONTIGUOUS, MR_TOPKW_SHAPE}};
        long[][] sh = shapes(t, e, k);
        for (int i = 0; i < 6; i++) {
            DType ft = fieldType(i);
            DType wrong = ft == DType.I32 ? (rnd.nextBoolean() ? DType.F32 : DType.I8) : (rnd.nextBoolean() ? DType.I32 : DType.F16);
            long[] badShape = sh[i].clone();
            badShape[rnd.nextInt(badShape.length)] += 1;
            Tensor[] bad = {f.closed(ft, sh[i]), f.poisoned(wrong, sh[i]), f.elsewhere(ft, sh[i]), Fixture.stridable(sh[i]) ? f.strided(ft, sh[i]) : null,
                f.poisoned(ft, rnd.nextBoolean() || sh[i].length == 1 ? badShape : new long[] {t * k})};
            for (int j = 0; j < 5; j++) {
                if (j == 3 && !Fixture.stridable(sh[i])) {
                    c.skip(byField[i][j], Fixture.ALL_ONES);
                    continue;
                }
                MoeRoute.Routing r = replace(out, i, bad[j]);
                c.add(byField[i][j], "route(logits, options, out, stream)", () -> MoeRoute.route(logits, o, r, null));
            }
        }
        // device-side: an output overlapping logits or an earlier output (the exception names the later one)
        ValidationRule[] overlap = {MR_OFFSETS_OVERLAP, MR_GATHER_OVERLAP, MR_WEIGHTS_OVERLAP, MR_ROWOF_OVERLAP, MR_IDS_OVERLAP, MR_TOPKW_OVERLAP};
        for (int i = 0; i < 6; i++) {
            int j = i == 0 || rnd.nextBoolean() ? -1 : rnd.nextInt(i);  // -1: logits
            DType pt = j < 0 ? dt : fieldType(j);
            long[] ps = j < 0 ? new long[] {t, e} : sh[j];
            Tensor[] ov = d.overlappingBytes(pt, ps, fieldType(i), sh[i], d.shiftWithin(pt.bytes() * Fixture.numel(ps), 4));
            Tensor lg = j < 0 ? ov[0] : dLogits;
            MoeRoute.Routing r = replace(j < 0 ? outputs(d, t, e, k) : replace(outputs(d, t, e, k), j, ov[0]), i, ov[1]);
            c.add(overlap[i], "route(logits, options, out, stream)", () -> MoeRoute.route(lg, o, r, null));
        }
        int neg = -rnd.nextInt(3);
        c.add(MR_DECIDE_TOKENS, "decide(tokens, experts, k, info)", () -> MoeRoute.decide(neg, e, k, null));
        c.add(MR_DECIDE_EXPERTS, "decide(tokens, experts, k, info)", () -> MoeRoute.decide(t, rnd.nextBoolean() ? neg : eBig, 1, null));
        c.add(MR_DECIDE_K, "decide(tokens, experts, k, info)", () -> MoeRoute.decide(t, e, badK, DeviceInfo.h100ForTests()));
        Device dev = f.device;
        c.add(MR_ALLOC_DEVICE, "Routing.allocate", () -> RuleCheck.discard(MoeRoute.Routing.allocate(null, (int) t, (int) e, k)));
        c.add(MR_ALLOC_TOKENS, "Routing.allocate", () -> RuleCheck.discard(MoeRoute.Routing.allocate(dev, neg, (int) e, k)));
        c.add(MR_ALLOC_TOKENS, "Routing.allocate", () -> RuleCheck.discard(MoeRoute.Routing.allocate(dev, 1 << 27, (int) e, 16 + rnd.nextInt(16))));
        c.add(MR_ALLOC_EXPERTS, "Routing.allocate", () -> RuleCheck.discard(MoeRoute.Routing.allocate(dev, (int) t, neg, k)));
        c.add(MR_ALLOC_K, "Routing.allocate", () -> RuleCheck.discard(MoeRoute.Routing.allocate(dev, (int) t, (int) e, neg)));
        if (f.gpu()) {
            RuleCheck.streamCases(c, f, MR_STREAM_CLOSED, MR_STREAM_DEVICE, java.util.Map.of(
                    "route(logits, options, out, stream)", st -> () -> MoeRoute.route(logits, o, out, st)));
        }
        return c;
    }

    static Tensor[] all(MoeRoute.Routing r) {
        return new Tensor[] {r.offsets, r.gather, r.weights, r.rowOf, r.topkIds, r.topkWeights};
    }

    @Property(tries = 30)
    @Covers({MR_LOGITS_NULL, MR_LOGITS_CLOSED, MR_LOGITS_RANK, MR_LOGITS_DTYPE, MR_LOGITS_CONTIGUOUS, MR_OPTIONS_NULL, MR_TOPK, MR_SCORE_NULL,
            MR_BACKEND, MR_VENDOR, MR_EXPERTS_MAX, MR_TOKENS_INT32, MR_OUT_NULL,
            MR_OFFSETS_CLOSED, MR_OFFSETS_DTYPE, MR_OFFSETS_DEVICE, MR_OFFSETS_CONTIGUOUS, MR_OFFSETS_SHAPE,
            MR_GATHER_CLOSED, MR_GATHER_DTYPE, MR_GATHER_DEVICE, MR_GATHER_CONTIGUOUS, MR_GATHER_SHAPE,
            MR_WEIGHTS_CLOSED, MR_WEIGHTS_DTYPE, MR_WEIGHTS_DEVICE, MR_WEIGHTS_CONTIGUOUS, MR_WEIGHTS_SHAPE,
            MR_ROWOF_CLOSED, MR_ROWOF_DTYPE, MR_ROWOF_DEVICE, MR_ROWOF_CONTIGUOUS, MR_ROWOF_SHAPE,
            MR_IDS_CLOSED, MR_IDS_DTYPE, MR_IDS_DEVICE, MR_IDS_CONTIGUOUS, MR_IDS_SHAPE,
            MR_TOPKW_CLOSED, MR_TOPKW_DTYPE, MR_TOPKW_DEVICE, MR_TOPKW_CONTIGUOUS, MR_TOPKW_SHAPE,
            MR_OFFSETS_OVERLAP, MR_GATHER_OVERLAP, MR_WEIGHTS_OVERLAP, MR_ROWOF_OVERLAP, MR_IDS_OVERLAP, MR_TOPKW_OVERLAP,
            MR_DECIDE_TOKENS, MR_DECIDE_TOKENS_INT32, MR_DECIDE_EXPERTS, MR_DECIDE_K, MR_ALLOC_DEVICE, MR_ALLOC_TOKENS, MR_ALLOC_EXPERTS, MR_ALLOC_K})
    void everyRuleIsEnforcedBeforeAnyWork(@ForAll @IntRange(min = 1, max = 20) int t, @ForAll @IntRange(min = 1, max = 40) int e,
                                          @ForAll @IntRange(min = 1, max = 8) int kk, @ForAll @IntRange(min = 0, max = 2) int dti,
                                          @ForAll boolean sigmoid, @ForAll boolean renorm, @ForAll long seed) {
        int k = Math.min(kk, e);
        DType dt = FLOATS[dti];
        try (Fixture f = new Fixture(Device.CPU, seed)) {
            Tensor logits = f.random(dt, t, e);
            MoeRoute.Options o = MoeRoute.Options.topK(k).withScore(sigmoid ? MoeRoute.Score.SIGMOID : MoeRoute.Score.SOFTMAX).withRenormalize(renorm);
            MoeRoute.Routing out = outputs(f, t, e, k);
            RuleCheck.run(f, cases(f, dt, logits, o, out), () -> MoeRoute.route(logits, o, out, null), all(out));
        }
    }
}
