package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.ops.GqaDecode.KvCache;
import dev.gapfill.ops.GqaDecode.KvLayout;
import dev.gapfill.ops.GqaDecode.Options;
import dev.gapfill.ops.GqaDecode.Problem;
import dev.gapfill.ops.reference.GqaDecodeReference;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static dev.gapfill.ops.ValidationRule.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Validation of GqaDecode and properties of its CPU reference (the CPU backend), on the CPU. */
class GqaDecodeValidationProperties {
    private static final Device CPU = Device.CPU;

    @Test void problemValidationNamesTheArgument() {
        assertEquals("qHeads", assertThrows(ArgumentException.class,
                () -> Problem.contiguous(1, 6, 4, 128, 10, KvLayout.BHLD, DType.F16)).argument());
        assertEquals("headDim", assertThrows(ArgumentException.class,
                () -> Problem.contiguous(1, 4, 4, 100, 10, KvLayout.BHLD, DType.F16)).argument());
        assertEquals("headDim", assertThrows(ArgumentException.class,
                () -> Problem.contiguous(1, 4, 4, 512, 10, KvLayout.BHLD, DType.F16)).argument());
        assertEquals("dtype", assertThrows(ArgumentException.class,
                () -> Problem.contiguous(1, 4, 4, 128, 10, KvLayout.BHLD, DType.F32)).argument());
        assertEquals("pageSize", assertThrows(ArgumentException.class,
                () -> new Problem(1, 4, 4, 128, 10, KvLayout.PAGED, 24, 1, DType.F16)).argument());
        assertEquals("maxPages", assertThrows(ArgumentException.class,
                () -> new Problem(1, 4, 4, 128, 100, KvLayout.PAGED, 16, 6, DType.F16)).argument());
        assertEquals("pageSize/maxPages", assertThrows(ArgumentException.class,
                () -> new Problem(1, 4, 4, 128, 100, KvLayout.BHLD, 16, 7, DType.F16)).argument());
        assertEquals("maxLen", assertThrows(ArgumentException.class,
                () -> Problem.contiguous(1, 4, 4, 128, 0, KvLayout.BHLD, DType.F16)).argument());
        assertEquals("backend", assertThrows(ArgumentException.class, () -> new Options(Backend.REFERENCE, Double.NaN)).argument());
        assertEquals("scale", assertThrows(ArgumentException.class, () -> Options.defaults().withScale(Double.POSITIVE_INFINITY)).argument());
        // the kernels take the scale in fp32 (custom: times log2 e): 1e39 is +inf there, 1e-50 is 0, 2.4e38·log2 e overflows
        for (double fp32Bad : new double[] {1e39, -1e-50, 2.4e38}) {
            assertEquals("scale", assertThrows(ArgumentException.class, () -> Options.defaults().withScale(fp32Bad)).argument());
        }
        assertEquals(1e38, Options.defaults().withScale(1e38).scale(), "finite in fp32 with the factor: accepted");
        assertEquals(1e-40, Options.defaults().withScale(1e-40).scale(), "an fp32 subnormal is not zero: accepted");
    }

    @Test void runValidatesEveryTensorBeforeComputing() {
        Random rnd = new Random(3);
        Problem p = Problem.contiguous(2, 8, 2, 64, 20, KvLayout.BHLD, DType.F16);
        try (Tensor q = Poison.random(CPU, DType.F16, rnd, 2, 8, 64); Tensor k = Poison.random(CPU, DType.F16, rnd, 2, 2, 20, 64);
             Tensor v = Poison.random(CPU, DType.F16, rnd, 2, 2, 20, 64); Tensor lens = Tensor.ofInts(CPU, new int[] {20, 3}, 2);
             Tensor out = Tensor.empty(CPU, DType.F16, 2, 8, 64); Tensor lse = Tensor.empty(CPU, DType.F32, 2, 8);
             Tensor badQ = Poison.random(CPU, DType.F16, rnd, 2, 4, 64); Tensor bf = Poison.random(CPU, DType.BF16, rnd, 2, 8, 64);
             Tensor lensF = Tensor.empty(CPU, DType.F32, 2); Tensor shortK = Poison.random(CPU, DType.F16, rnd, 2, 2, 10, 64);
             Tensor lseBad = Tensor.empty(CPU, DType.F16, 2, 8); Tensor table = Tensor.ofInts(CPU, new int[] {0, 1}, 2, 1);
             GqaDecodePlan plan = GqaDecode.plan(p, CPU)) {
            KvCache c = KvCache.bhld(k, v);
            assertEquals(Backend.REFERENCE, plan.decision().backend());
            assertEquals("q", assertThrows(ArgumentException.class, () -> plan.run(badQ, c, lens, out, null)).argument());
            assertEquals("q", assertThrows(ArgumentException.class, () -> plan.run(bf, c, lens, out, null)).argument());
            assertEquals("lens", assertThrows(ArgumentException.class, () -> plan.run(q, c, lensF, out, null)).argument());
            assertEquals("out", assertThrows(ArgumentException.class, () -> plan.run(q, c, lens, bf, null)).argument());
            assertEquals("lse", assertThrows(ArgumentException.class, () -> plan.run(q, c, lens, out, lseBad, null)).argument());
            assertEquals("cache.k", assertThrows(ArgumentException.class, () -> plan.run(q, KvCache.bhld(shortK, v), lens, out, null)).argument());
            assertEquals("cache.v", assertThrows(ArgumentException.class, () -> plan.run(q, KvCache.bhld(k, shortK), lens, out, null)).argument());
            assertEquals("cache", assertThrows(ArgumentException.class, () -> plan.run(q, KvCache.blhd(k, v), lens, out, null)).argument());
            assertEquals("cache.blockTable", assertThrows(ArgumentException.class,
                    () -> plan.run(q, new KvCache(KvLayout.BHLD, k, v, table), lens, out, null)).argument());
            assertEquals("cache", assertThrows(ArgumentException.class, () -> plan.run(q, null, lens, out, null)).argument());
            plan.run(q, c, lens, out, lse, null);  // the valid call works
        }
        GqaDecodePlan closed = GqaDecode.plan(p, CPU);
        closed.close();
        assertThrows(IllegalStateException.class, closed::close);
    }

    @Test void closedTensorsAreRejected() {
        Random rnd = new Random(4);
        Problem p = Problem.contiguous(1, 2, 1, 64, 5, KvLayout.BLHD, DType.BF16);
        try (Tensor q = Poison.random(CPU, DType.BF16, rnd, 1, 2, 64); Tensor v = Poison.random(CPU, DType.BF16, rnd, 1, 5, 1, 64);
             Tensor lens = Tensor.ofInts(CPU, new int[] {5}, 1); Tensor out = Tensor.empty(CPU, DType.BF16, 1, 2, 64);
             GqaDecodePlan plan = GqaDecode.plan(p, CPU)) {
            Tensor k = Poison.random(CPU, DType.BF16, rnd, 1, 5, 1, 64);
            k.close();
            assertEquals("cache.k", assertThrows(ArgumentException.class, () -> plan.run(q, KvCache.blhd(k, v), lens, out, null)).argument());
        }
    }

    /** Empty sequences give zeros and lse = −inf; a single key gives its V row (rounded once) and its score. */
    @Property(tries = 20)
    void emptyAndSingleKeySequences(@ForAll @IntRange(min = 1, max = 8) int g, @ForAll long seed) {
        Random rnd = new Random(seed);
        int d = 64;
        try (Tensor q = Poison.random(CPU, DType.F16, rnd, 2, g, d); Tensor k = Poison.random(CPU, DType.F16, rnd, 2, 1, 9, d);
             Tensor v = Poison.random(CPU, DType.F16, rnd, 2, 1, 9, d); Tensor lens = Tensor.ofInts(CPU, new int[] {0, 1}, 2);
             Tensor out = Poison.poisoned(CPU, DType.F16, 2, g, d); Tensor lse = Poison.poisoned(CPU, DType.F32, 2, g)) {
            GqaDecode.decode(q, KvCache.bhld(k, v), lens, out, lse, Options.defaults(), null);
            for (int h = 0; h < g; h++) {
                assertEquals(Float.NEGATIVE_INFINITY, (float) lse.getDouble(h));
                double score = 0;
                for (int e = 0; e < d; e++) {
                    assertEquals(0.0, out.getDouble((long) h * d + e));
                    assertEquals(v.getDouble((long) 9 * d + e), out.getDouble(((long) g + h) * d + e), "single key: o = v");
                    score += q.getDouble(((long) g + h) * d + e) * k.getDouble((long) 9 * d + e);
                }
                assertEquals((float) (score / Math.sqrt(d)), (float) lse.getDouble(g + h));
            }
        }
    }

    /** The output is a convex combination of the valid V rows; lengths past maxLen are clamped. */
    @Property(tries = 25)
    void outputIsAConvexCombinationOfValidRows(@ForAll @IntRange(min = 1, max = 40) int len, @ForAll @IntRange(min = 1, max = 4) int g,
                                               @ForAll long seed) {
        Random rnd = new Random(seed);
        int d = 64;
        int cap = 40;
        try (Tensor q = Poison.random(CPU, DType.BF16, rnd, 1, 2 * g, d); Tensor k = Poison.random(CPU, DType.BF16, rnd, 1, 2, cap, d);
             Tensor v = Poison.random(CPU, DType.BF16, rnd, 1, 2, cap, d)) {
            GqaDecodeReference.Exact ex = GqaDecodeReference.exact(q, KvCache.bhld(k, v), new int[] {len + 1000}, len, 1.0 / 8);
            assertEquals(len, ex.lens()[0]);
            for (int h = 0; h < 2 * g; h++) {
                int kvh = h / g;
                for (int e = 0; e < d; e++) {
                    double lo = Double.POSITIVE_INFINITY;
                    double hi = Double.NEGATIVE_INFINITY;
                    for (int j = 0; j < len; j++) {
                        double x = v.getDouble(((long) kvh * cap + j) * d + e);
                        lo = Math.min(lo, x);
                        hi = Math.max(hi, x);
                    }
                    double o = ex.out()[h * d + e];
                    assertTrue(o >= lo - 1e-12 && o <= hi + 1e-12, "o outside the hull of the valid rows");
                    assertTrue(Math.abs(o) <= ex.absTerms()[h * d + e] + 1e-12);
                }
                assertTrue(ex.lse()[h] >= -ex.sigma()[h] + Math.log(len) - 1e-9 && ex.lse()[h] <= ex.sigma()[h] + Math.log(len) + 1e-9);
            }
        }
    }

    /** Grouped heads equal multi-head attention with each KV head repeated G times. */
    @Property(tries = 15)
    void groupedEqualsRepeatedMultiHead(@ForAll @IntRange(min = 1, max = 6) int g, @ForAll @IntRange(min = 1, max = 30) int len,
                                        @ForAll long seed) {
        Random rnd = new Random(seed);
        int d = 64;
        int hkv = 2;
        try (Tensor q = Poison.random(CPU, DType.F16, rnd, 1, hkv * g, d); Tensor k = Poison.random(CPU, DType.F16, rnd, 1, hkv, len, d);
             Tensor v = Poison.random(CPU, DType.F16, rnd, 1, hkv, len, d);
             Tensor kr = Tensor.empty(CPU, DType.F16, 1, hkv * g, len, d); Tensor vr = Tensor.empty(CPU, DType.F16, 1, hkv * g, len, d)) {
            for (int h = 0; h < hkv * g; h++) {
                for (int i = 0; i < len * d; i++) {
                    kr.setRawBits((long) h * len * d + i, k.getRawBits((long) (h / g) * len * d + i));
                    vr.setRawBits((long) h * len * d + i, v.getRawBits((long) (h / g) * len * d + i));
                }
            }
            GqaDecodeReference.Exact a = GqaDecodeReference.exact(q, KvCache.bhld(k, v), new int[] {len}, len, 0.125);
            GqaDecodeReference.Exact b = GqaDecodeReference.exact(q, KvCache.bhld(kr, vr), new int[] {len}, len, 0.125);
            assertTrue(java.util.Arrays.equals(a.out(), b.out()));
            assertTrue(java.util.Arrays.equals(a.lse(), b.lse()));
        }
    }

    /** The reference runs its (sequence, KV head) pairs in parallel: a range of sequences is the same bits as its slice of the batch. */
    @Test void aRangeOfSequencesIsItsSliceOfTheWholeBatch() {
        Random rnd = new Random(12);
        int b = 3, hq = 8, hkv = 2, d = 16, cap = 13;
        int[] lens = {11, 0, 13};
        try (Tensor q = Poison.random(CPU, DType.F16, rnd, b, hq, d); Tensor k = Poison.random(CPU, DType.F16, rnd, b, hkv, cap, d);
             Tensor v = Poison.random(CPU, DType.F16, rnd, b, hkv, cap, d)) {
            GqaDecodeReference.Exact whole = GqaDecodeReference.exact(q, KvCache.bhld(k, v), lens, cap, 0.25);
            for (int i = 0; i < b; i++) {
                GqaDecodeReference.Exact one = GqaDecodeReference.exact(q, KvCache.bhld(k, v), lens, cap, 0.25, i, i + 1);
                int o = i * hq * d;
                assertTrue(java.util.Arrays.equals(one.out(), java.util.Arrays.copyOfRange(whole.out(), o, o + hq * d)), "out of " + i);
                assertTrue(java.util.Arrays.equals(one.absTerms(), java.util.Arrays.copyOfRange(whole.absTerms(), o, o + hq * d)));
                assertTrue(java.util.Arrays.equals(one.lse(), java.util.Arrays.copyOfRange(whole.lse(), i * hq, i * hq + hq)));
                assertTrue(java.util.Arrays.equals(one.sigma(), java.util.Arrays.copyOfRange(whole.sigma(), i * hq, i * hq + hq)));
                assertEquals(lens[i], one.lens()[0]);
            }
            assertEquals(Double.NEGATIVE_INFINITY, whole.lse()[hq]);  // the empty sequence
        }
    }

    @Test void allocatingDecodeEqualsTheReference() {
        Random rnd = new Random(9);
        try (Tensor q = Poison.random(CPU, DType.F16, rnd, 2, 4, 64); Tensor k = Poison.random(CPU, DType.F16, rnd, 2, 17, 2, 64);
             Tensor v = Poison.random(CPU, DType.F16, rnd, 2, 17, 2, 64); Tensor lens = Tensor.ofInts(CPU, new int[] {17, 9}, 2);
             Tensor out = GqaDecode.decode(q, KvCache.blhd(k, v), lens, Options.defaults().withScale(0.3))) {
            GqaDecodeReference.Exact ex = GqaDecodeReference.exact(q, KvCache.blhd(k, v), new int[] {17, 9}, 17, 0.3);
            for (int i = 0; i < ex.out().length; i++) {
                assertEquals((float) dev.gapfill.core.HalfFloats.halfToFloat(dev.gapfill.core.HalfFloats.doubleToHalf(ex.out()[i])),
                        (float) out.getDouble(i), "element " + i);
            }
        }
    }

    /** Every path indexes the cache in 64 bits: Problem.of takes a cache of 2^31 elements or more, as plan(Problem.contiguous/paged) does. */
    @Test void problemOfTakesACacheOf2To31ElementsOrMore() {
        try (Fixture f = new Fixture(CPU, 5)) {
            Fixture big = f.fakes();
            Tensor q = big.fake(DType.F16, 1, 8, 64);
            long len = 1L << 24;  // [1, 2, 2^24, 64]: 2^31 elements
            Tensor k = big.fake(DType.F16, 1, 2, len, 64);
            assertEquals(Problem.contiguous(1, 8, 2, 64, (int) len, KvLayout.BHLD, DType.F16), Problem.of(q, KvCache.bhld(k, k)));
            Tensor kl = big.fake(DType.F16, 1, len, 2, 64);
            assertEquals(Problem.contiguous(1, 8, 2, 64, (int) len, KvLayout.BLHD, DType.F16), Problem.of(q, KvCache.blhd(kl, kl)));
            Tensor pages = big.fake(DType.F16, 1L << 20, 16, 2, 64);
            Tensor table = big.fake(DType.I32, 1, 1L << 20);
            assertEquals(Problem.paged(1, 8, 2, 64, 16, 1 << 20, DType.F16), Problem.of(q, KvCache.paged(pages, pages, table)));
            Tensor wide = big.fake(DType.F16, 1, 2, 1L << 31, 64);  // a dim past int: named
            assertEquals("cache.k", assertThrows(ArgumentException.class, () -> Problem.of(q, KvCache.bhld(wide, wide))).argument());
        }
    }

    /** Device tensors: out and lse must not overlap the inputs or each other (checked in run's validation, before any launch). */
    @Test void runRejectsOutputsOverlappingInputsOnTheDevice() {
        try (Fixture f = new Fixture(CPU, 6)) {
            Fixture d = f.deviceSide();  // fake tensors: nothing is dereferenced
            Device dev = Fixture.NOWHERE;
            Problem p = Problem.contiguous(2, 4, 2, 64, 8, KvLayout.BHLD, DType.F16);
            long[] qs = {2, 4, 64};
            long[] ks = {2, 2, 8, 64};
            Tensor q = d.random(DType.F16, qs);
            Tensor k = d.random(DType.F16, ks);
            Tensor v = d.random(DType.F16, ks);
            Tensor lens = d.ints(new int[] {8, 3}, 2);
            Tensor out = d.poisoned(DType.F16, qs);
            Tensor lse = d.poisoned(DType.F32, 2, 4);
            GqaDecodePlan.validate(p, dev, q, KvCache.bhld(k, v), lens, out, lse);  // disjoint: accepted
            Tensor[] oq = d.overlappingBytes(DType.F16, qs, DType.F16, qs, 16);
            assertEquals("out", assertThrows(ArgumentException.class,
                    () -> GqaDecodePlan.validate(p, dev, oq[0], KvCache.bhld(k, v), lens, oq[1], lse)).argument());
            Tensor[] ok = d.overlappingBytes(DType.F16, ks, DType.F16, qs, 0);
            assertEquals("out", assertThrows(ArgumentException.class,
                    () -> GqaDecodePlan.validate(p, dev, q, KvCache.bhld(ok[0], v), lens, ok[1], null)).argument());
            Tensor[] ov = d.overlappingBytes(DType.F16, ks, DType.F32, new long[] {2, 4}, 64);
            assertEquals("lse", assertThrows(ArgumentException.class,
                    () -> GqaDecodePlan.validate(p, dev, q, KvCache.bhld(k, ov[0]), lens, out, ov[1])).argument());
            Tensor[] ol = d.overlappingBytes(DType.I32, new long[] {2}, DType.F32, new long[] {2, 4}, 4);
            assertEquals("lse", assertThrows(ArgumentException.class,
                    () -> GqaDecodePlan.validate(p, dev, q, KvCache.bhld(k, v), ol[0], out, ol[1])).argument());
            Tensor[] oo = d.overlappingBytes(DType.F16, qs, DType.F32, new long[] {2, 4}, 32);
            assertEquals("lse", assertThrows(ArgumentException.class,
                    () -> GqaDecodePlan.validate(p, dev, q, KvCache.bhld(k, v), lens, oo[0], oo[1])).argument());
        }
    }

    @Test void decideOnTheCpuIsTheReference() {
        Problem p = Problem.contiguous(1, 8, 2, 128, 100, KvLayout.BHLD, DType.F16);
        assertEquals(Backend.REFERENCE, GqaDecode.decide(p, CPU, Options.defaults()).backend());
        // AUTO on a GPU: the custom kernel (faster than the cuBLAS composition on every harness row)
        assertEquals(Backend.CUSTOM, GqaDecode.decide(p, dev.gapfill.core.DeviceInfo.h100ForTests(), Options.defaults()).backend());
        assertEquals(Backend.VENDOR, GqaDecode.decide(p, dev.gapfill.core.DeviceInfo.h100ForTests(),
                Options.defaults().withBackend(Backend.VENDOR)).backend());
    }

    // ------------------------------------------------------------------ every validation rule, on random problems

    /** A valid decode step on a fixture: tensors, the problem they define (Problem.of), and a plan for it. */
    record Step(Problem problem, Tensor q, KvCache cache, Tensor lens, Tensor out, Tensor lse, GqaDecodePlan plan, long pages) {
        static Step on(Fixture f, DType dt, KvLayout layout, int b, int hkv, int g, int d, int len, int pageShift, boolean withLse) {
            java.util.Random rnd = f.rnd;
            int hq = hkv * g;
            Tensor q = f.random(dt, b, hq, d);
            Tensor k;
            Tensor v;
            Tensor table = null;
            long pages = 0;
            int cap = len;
            if (layout == KvLayout.PAGED) {
                int ps = 1 << pageShift;
                int maxPages = (len + ps - 1) / ps + rnd.nextInt(2);
                pages = (long) b * maxPages + rnd.nextInt(3);
                java.util.List<Integer> perm = new java.util.ArrayList<>();
                for (int i = 0; i < pages; i++) {
                    perm.add(i);
                }
                java.util.Collections.shuffle(perm, rnd);
                int[] t = new int[b * maxPages];
                for (int i = 0; i < t.length; i++) {
                    t[i] = perm.get(i);
                }
                k = f.random(dt, pages, ps, hkv, d);
                v = f.random(dt, pages, ps, hkv, d);
                table = f.ints(t, b, maxPages);
                cap = ps * maxPages;
            } else {
                long[] shape = layout == KvLayout.BHLD ? new long[] {b, hkv, len, d} : new long[] {b, len, hkv, d};
                k = f.random(dt, shape);
                v = f.random(dt, shape);
            }
            int[] l = new int[b];
            for (int i = 0; i < b; i++) {
                l[i] = rnd.nextInt(cap + 1);
            }
            KvCache cache = new KvCache(layout, k, v, table);
            Problem p = Problem.of(q, cache);
            GqaDecodePlan plan = f.track(GqaDecode.plan(p, f.device, Options.defaults(), null));
            return new Step(p, q, cache, f.ints(l, b), f.poisoned(dt, b, hq, d), withLse ? f.poisoned(DType.F32, b, hq) : null, plan, pages);
        }

        long[] kShape() { return cache.k().shape(); }

        void run() { plan.run(q, cache, lens, out, lse, null); }
    }

    /**
     * Adds a run case through plan.run (both overloads: without lse only when lse is not under test) and, where the
     * problem derived from the tensors is still the plan's ({@code viaDecode}), through decode (both overloads: the
     * allocating one only when neither out nor lse is under test).
     */
    private static void add(RuleCheck.Cases c, Step s, ValidationRule r, Tensor q, KvCache cache, Tensor lens, Tensor out, Tensor lse,
                            boolean viaDecode, String target) {
        GqaDecodePlan plan = s.plan();
        c.add(r, "plan.run(q, cache, lens, out, lse, stream)", () -> plan.run(q, cache, lens, out, lse, null));
        if (!target.equals("lse")) {
            c.add(r, "plan.run(q, cache, lens, out, stream)", () -> plan.run(q, cache, lens, out, null));
        }
        if (viaDecode) {
            c.add(r, "decode(q, cache, lens, out, lse, options, stream)", () -> GqaDecode.decode(q, cache, lens, out, lse, Options.defaults(), null));
            if (!target.equals("out") && !target.equals("lse")) {
                c.add(r, "decode(q, cache, lens, options)", () -> RuleCheck.discard(GqaDecode.decode(q, cache, lens, Options.defaults())));
            }
        }
    }

    private static void addOf(RuleCheck.Cases c, Step s, ValidationRule r, Tensor q, KvCache cache, boolean allocating) {
        c.add(r, "Problem.of(q, cache)", () -> Problem.of(q, cache));
        c.add(r, "decode(q, cache, lens, out, lse, options, stream)", () -> GqaDecode.decode(q, cache, s.lens(), s.out(), s.lse(), Options.defaults(), null));
        if (allocating) {
            c.add(r, "decode(q, cache, lens, options)", () -> RuleCheck.discard(GqaDecode.decode(q, cache, s.lens(), Options.defaults())));
        }
    }

    private static KvCache withK(KvCache c, Tensor k) { return new KvCache(c.layout(), k, c.v(), c.blockTable()); }

    private static KvCache withV(KvCache c, Tensor v) { return new KvCache(c.layout(), c.k(), v, c.blockTable()); }

    private static KvCache withTable(KvCache c, Tensor t) { return new KvCache(c.layout(), c.k(), c.v(), t); }

    /** Every GqaDecode and GqaDecodePlan.run rule on {@code s}; GPU-only rules on a GPU fixture. */
    static RuleCheck.Cases cases(Fixture f, Step s, Step paged, Step contiguous) {
        RuleCheck.Cases c = new RuleCheck.Cases();
        java.util.Random rnd = f.rnd;
        Problem p = s.problem();
        DType dt = p.dtype();
        Tensor q = s.q();
        KvCache cache = s.cache();
        Tensor lens = s.lens();
        Tensor out = s.out();
        Tensor lse = s.lse();
        int b = p.batch();
        int hq = p.qHeads();
        int d = p.headDim();
        DeviceInfo info = f.gpu() ? Gpu.device(f.device).info() : DeviceInfo.h100ForTests();
        // ---- Problem and Options
        int neg = -rnd.nextInt(3);
        c.add(GQ_PROBLEM_BATCH, "new Problem", () -> new Problem(neg, 1, 1, 64, 8, KvLayout.BHLD, 0, 0, dt));
        c.add(GQ_PROBLEM_BATCH, "Problem.contiguous", () -> Problem.contiguous(neg, 1, 1, 64, 8, KvLayout.BLHD, dt));
        c.add(GQ_PROBLEM_BATCH, "Problem.paged", () -> Problem.paged(neg, 1, 1, 64, 4, 2, dt));
        int kv2 = 2 + rnd.nextInt(3);
        c.add(GQ_PROBLEM_QHEADS, "new Problem", () -> new Problem(1, neg, 1, 64, 8, KvLayout.BHLD, 0, 0, dt));
        c.add(GQ_PROBLEM_QHEADS, "Problem.contiguous", () -> Problem.contiguous(1, kv2 * (1 + rnd.nextInt(3)) + 1, kv2, 64, 8, KvLayout.BHLD, dt));
        c.add(GQ_PROBLEM_QHEADS, "Problem.paged", () -> Problem.paged(1, kv2 + 1, kv2, 64, 4, 2, dt));
        c.add(GQ_PROBLEM_KVHEADS, "new Problem", () -> new Problem(1, 4, neg, 64, 8, KvLayout.BHLD, 0, 0, dt));
        c.add(GQ_PROBLEM_KVHEADS, "Problem.paged", () -> Problem.paged(1, 4, neg, 64, 4, 2, dt));
        int[] badD = {neg, 8 * (1 + rnd.nextInt(32)) + 1 + rnd.nextInt(7), 264 + 8 * rnd.nextInt(10)};
        int bd = badD[rnd.nextInt(3)];
        c.add(GQ_PROBLEM_HEADDIM, "new Problem", () -> new Problem(1, 1, 1, bd, 8, KvLayout.BHLD, 0, 0, dt));
        c.add(GQ_PROBLEM_HEADDIM, "Problem.contiguous", () -> Problem.contiguous(1, 1, 1, bd, 8, KvLayout.BLHD, dt));
        c.add(GQ_PROBLEM_HEADDIM, "Problem.paged", () -> Problem.paged(1, 1, 1, bd, 4, 2, dt));
        c.add(GQ_PROBLEM_MAXLEN, "new Problem", () -> new Problem(1, 1, 1, 64, neg, KvLayout.BHLD, 0, 0, dt));
        c.add(GQ_PROBLEM_MAXLEN, "Problem.contiguous", () -> Problem.contiguous(1, 1, 1, 64, neg, KvLayout.BHLD, dt));
        c.add(GQ_PROBLEM_LAYOUT, "new Problem", () -> new Problem(1, 1, 1, 64, 8, null, 0, 0, dt));
        c.add(GQ_PROBLEM_LAYOUT, "Problem.contiguous", () -> Problem.contiguous(1, 1, 1, 64, 8, null, dt));
        DType badDt = new DType[] {DType.F32, DType.I8, DType.I32, null}[rnd.nextInt(4)];
        c.add(GQ_PROBLEM_DTYPE, "new Problem", () -> new Problem(1, 1, 1, 64, 8, KvLayout.BHLD, 0, 0, badDt));
        c.add(GQ_PROBLEM_DTYPE, "Problem.contiguous", () -> Problem.contiguous(1, 1, 1, 64, 8, KvLayout.BHLD, badDt));
        c.add(GQ_PROBLEM_DTYPE, "Problem.paged", () -> Problem.paged(1, 1, 1, 64, 4, 2, badDt));
        int notPow2 = new int[] {3, 5, 6, 12, 24}[rnd.nextInt(5)];
        c.add(GQ_PROBLEM_PAGESIZE, "new Problem", () -> new Problem(1, 1, 1, 64, 8, KvLayout.PAGED, rnd.nextBoolean() ? notPow2 : neg, 8, dt));
        c.add(GQ_PROBLEM_PAGESIZE, "Problem.paged", () -> Problem.paged(1, 1, 1, 64, notPow2, 2, dt));
        c.add(GQ_PROBLEM_MAXPAGES, "new Problem", () -> new Problem(1, 1, 1, 64, 8, KvLayout.PAGED, 4, neg, dt));
        c.add(GQ_PROBLEM_MAXPAGES, "new Problem", () -> new Problem(1, 1, 1, 64, 9 + rnd.nextInt(8), KvLayout.PAGED, 4, 2, dt));
        c.add(GQ_PROBLEM_MAXPAGES, "Problem.paged", () -> Problem.paged(1, 1, 1, 64, 1 << 16, (1 << 15) + rnd.nextInt(1 << 15), dt));
        c.add(GQ_PROBLEM_CONTIGUOUS_PAGING, "new Problem", () -> new Problem(1, 1, 1, 64, 8, KvLayout.BLHD, 4, 0, dt));
        c.add(GQ_PROBLEM_CONTIGUOUS_PAGING, "new Problem", () -> new Problem(1, 1, 1, 64, 8, KvLayout.BHLD, 0, 1 + rnd.nextInt(4), dt));
        c.add(GQ_OPTIONS_BACKEND, "new Options", () -> new Options(rnd.nextBoolean() ? null : Backend.REFERENCE, Double.NaN));
        c.add(GQ_OPTIONS_BACKEND, "Options.withBackend", () -> Options.defaults().withBackend(rnd.nextBoolean() ? null : Backend.REFERENCE));
        double badScale = new double[] {Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 0.0, -0.0, 1e39, -1e-50}[rnd.nextInt(6)];
        c.add(GQ_OPTIONS_SCALE, "new Options", () -> new Options(Backend.AUTO, badScale));
        c.add(GQ_OPTIONS_SCALE, "Options.withScale", () -> Options.defaults().withScale(badScale));
        Device dev = f.device;
        c.add(GQ_PLAN_PROBLEM_NULL, "plan(problem, device)", () -> RuleCheck.discard(GqaDecode.plan(null, dev)));
        c.add(GQ_PLAN_PROBLEM_NULL, "plan(problem, device, options, stream)", () -> RuleCheck.discard(GqaDecode.plan(null, dev, Options.defaults(), null)));
        c.add(GQ_PLAN_PROBLEM_NULL, "decide(problem, device, options)", () -> GqaDecode.decide(null, dev, Options.defaults()));
        c.add(GQ_PLAN_PROBLEM_NULL, "decide(problem, info, options)", () -> GqaDecode.decide(null, info, Options.defaults()));
        c.add(GQ_PLAN_DEVICE_NULL, "plan(problem, device)", () -> RuleCheck.discard(GqaDecode.plan(p, null)));
        c.add(GQ_PLAN_DEVICE_NULL, "plan(problem, device, options, stream)", () -> RuleCheck.discard(GqaDecode.plan(p, null, Options.defaults(), null)));
        c.add(GQ_PLAN_DEVICE_NULL, "decide(problem, device, options)", () -> GqaDecode.decide(p, (Device) null, Options.defaults()));
        c.add(GQ_PLAN_OPTIONS_NULL, "plan(problem, device, options, stream)", () -> RuleCheck.discard(GqaDecode.plan(p, dev, null, null)));
        c.add(GQ_PLAN_OPTIONS_NULL, "decide(problem, device, options)", () -> GqaDecode.decide(p, dev, null));
        c.add(GQ_PLAN_OPTIONS_NULL, "decide(problem, info, options)", () -> GqaDecode.decide(p, info, null));
        c.add(GQ_PLAN_OPTIONS_NULL, "decode(q, cache, lens, out, lse, options, stream)", () -> GqaDecode.decode(q, cache, lens, out, lse, null, null));
        c.add(GQ_PLAN_OPTIONS_NULL, "decode(q, cache, lens, options)", () -> RuleCheck.discard(GqaDecode.decode(q, cache, lens, null)));
        c.add(GQ_DECIDE_INFO_NULL, "decide(problem, info, options)", () -> GqaDecode.decide(p, (DeviceInfo) null, Options.defaults()));
        // ---- Problem.of (and decode, which derives the problem from the tensors)
        addOf(c, s, GQ_OF_Q_NULL, null, cache, true);
        addOf(c, s, GQ_OF_Q_CLOSED, f.closed(dt, q.shape()), cache, true);
        addOf(c, s, GQ_OF_Q_RANK, f.random(dt, rnd.nextBoolean() ? new long[] {b * hq, d} : new long[] {1, b, hq, d}), cache, true);
        addOf(c, s, GQ_OF_Q_DTYPE, f.random(rnd.nextBoolean() ? DType.F32 : DType.I32, q.shape()), cache, true);
        Fixture big = f.fakes();
        addOf(c, s, GQ_OF_Q_INT32, big.fake(DType.F16, 1L << 11, 1L << 10, 1L << 10), cache, false);
        addOf(c, s, GQ_OF_CACHE_NULL, q, null, true);
        addOf(c, s, GQ_OF_CACHE_LAYOUT, q, new KvCache(null, cache.k(), cache.v(), cache.blockTable()), true);
        addOf(c, s, GQ_OF_K_NULL, q, withK(cache, null), true);
        addOf(c, s, GQ_OF_K_CLOSED, q, withK(cache, f.closed(dt, s.kShape())), true);
        addOf(c, s, GQ_OF_K_RANK, q, withK(cache, f.random(dt, s.kShape()[0] * s.kShape()[1], s.kShape()[2], s.kShape()[3])), true);
        long[] kHuge = {1, 1, 8, 8};
        kHuge[rnd.nextInt(4)] = (1L << 31) + rnd.nextInt(1000);  // a dim past int (k of 2^31 elements or more is fine)
        addOf(c, s, GQ_OF_K_INT32, q, withK(cache, big.fake(DType.F16, kHuge)), false);
        KvCache pc = paged.cache();
        addOf(c, paged, GQ_OF_TABLE_NULL, paged.q(), withTable(pc, null), true);
        addOf(c, paged, GQ_OF_TABLE_CLOSED, paged.q(), withTable(pc, f.closed(DType.I32, pc.blockTable().shape())), true);
        addOf(c, paged, GQ_OF_TABLE_RANK, paged.q(), withTable(pc, f.ints(new int[(int) pc.blockTable().numel()], pc.blockTable().numel())), true);
        addOf(c, paged, GQ_OF_TABLE_INT32, paged.q(), withTable(pc, big.fake(DType.I32, 1L << 16, 1L << 15)), false);
        // ---- the backends' coverage (pure decide; on a GPU also plan)
        Problem d96 = Problem.contiguous(1, 8, 2, 96, 256, KvLayout.BHLD, dt);
        Problem huge = Problem.contiguous(2, 1, 1, 64, 1 << 30, KvLayout.BHLD, dt);
        Problem none = Problem.contiguous(2, 1, 1, 96, 1 << 30, KvLayout.BHLD, dt);
        c.add(GQ_CUSTOM_UNSUPPORTED, "decide(problem, info, options)", () -> GqaDecode.decide(d96, info, Options.defaults().withBackend(Backend.CUSTOM)));
        c.add(GQ_VENDOR_UNSUPPORTED, "decide(problem, info, options)", () -> GqaDecode.decide(huge, info, Options.defaults().withBackend(Backend.VENDOR)));
        c.add(GQ_NO_BACKEND, "decide(problem, info, options)", () -> GqaDecode.decide(none, info, Options.defaults()));
        if (f.gpu()) {
            c.add(GQ_CUSTOM_UNSUPPORTED, "plan(problem, device, options, stream)",
                    () -> RuleCheck.discard(GqaDecode.plan(d96, dev, Options.defaults().withBackend(Backend.CUSTOM), null)));
            c.add(GQ_VENDOR_UNSUPPORTED, "plan(problem, device, options, stream)",
                    () -> RuleCheck.discard(GqaDecode.plan(huge, dev, Options.defaults().withBackend(Backend.VENDOR), null)));
            c.add(GQ_NO_BACKEND, "plan(problem, device)", () -> RuleCheck.discard(GqaDecode.plan(none, dev)));
        }
        // ---- plan.run
        GqaDecodePlan closedPlan = GqaDecode.plan(p, dev);
        closedPlan.close();
        c.add(GQR_PLAN_CLOSED, "plan.run(q, cache, lens, out, lse, stream)", () -> closedPlan.run(q, cache, lens, out, lse, null));
        c.add(GQR_PLAN_CLOSED, "plan.run(q, cache, lens, out, stream)", () -> closedPlan.run(q, cache, lens, out, null));
        add(c, s, GQR_Q_NULL, null, cache, lens, out, lse, true, "q");
        add(c, s, GQR_Q_CLOSED, f.closed(dt, q.shape()), cache, lens, out, lse, true, "q");
        add(c, s, GQR_Q_DTYPE, f.random(rnd.nextBoolean() ? DType.F32 : DType.I32, q.shape()), cache, lens, out, lse, true, "q");
        long[][] qBad = {{b + 1, hq, d}, {b, hq + 1, d}, {b, hq, d + 8}};
        add(c, s, GQR_Q_SHAPE, f.random(dt, qBad[rnd.nextInt(3)]), cache, lens, out, lse, false, "q");
        add(c, s, GQR_Q_DEVICE, f.elsewhere(dt, q.shape()), cache, lens, out, lse, false, "q");
        c.whereStridable(GQR_Q_CONTIGUOUS,
                () -> add(c, s, GQR_Q_CONTIGUOUS, f.strided(dt, q.shape()), cache, lens, out, lse, true, "q"), q.shape());
        add(c, s, GQR_CACHE_NULL, q, null, lens, out, lse, true, "cache");
        KvLayout otherLayout = KvLayout.values()[(cache.layout().ordinal() + 1 + rnd.nextInt(2)) % 3];
        add(c, s, GQR_CACHE_LAYOUT, q, new KvCache(otherLayout, cache.k(), cache.v(), cache.blockTable()), lens, out, lse, false, "cache");
        add(c, s, GQR_K_NULL, q, withK(cache, null), lens, out, lse, true, "cache");
        add(c, s, GQR_K_CLOSED, q, withK(cache, f.closed(dt, s.kShape())), lens, out, lse, true, "cache");
        DType otherDt = dt == DType.F16 ? DType.BF16 : DType.F16;
        add(c, s, GQR_K_DTYPE, q, withK(cache, f.random(otherDt, s.kShape())), lens, out, lse, true, "cache");
        long[] kBad = s.kShape().clone();
        int kDim = cache.layout() == KvLayout.PAGED ? 1 + rnd.nextInt(3) : new int[] {0, cache.layout() == KvLayout.BHLD ? 1 : 2, 3}[rnd.nextInt(3)];
        kBad[kDim] = kDim == 3 ? kBad[3] + 8 : kBad[kDim] * 2;
        add(c, s, GQR_K_SHAPE, q, withK(cache, f.random(dt, kBad)), lens, out, lse, false, "cache");
        long[] kShort = contiguous.kShape().clone();
        kShort[contiguous.cache().layout() == KvLayout.BHLD ? 2 : 1] -= 1;
        KvCache shortCache = new KvCache(contiguous.cache().layout(), f.random(dt, kShort), f.random(dt, kShort), null);
        add(c, contiguous, GQR_K_CAPACITY, contiguous.q(), shortCache, contiguous.lens(), contiguous.out(), contiguous.lse(), false, "cache");
        add(c, s, GQR_K_DEVICE, q, withK(cache, f.elsewhere(dt, s.kShape())), lens, out, lse, true, "cache");
        c.whereStridable(GQR_K_CONTIGUOUS,
                () -> add(c, s, GQR_K_CONTIGUOUS, q, withK(cache, f.strided(dt, s.kShape())), lens, out, lse, true, "cache"), s.kShape());
        add(c, s, GQR_V_NULL, q, withV(cache, null), lens, out, lse, true, "cache");
        add(c, s, GQR_V_CLOSED, q, withV(cache, f.closed(dt, s.kShape())), lens, out, lse, true, "cache");
        add(c, s, GQR_V_DTYPE, q, withV(cache, f.random(otherDt, s.kShape())), lens, out, lse, true, "cache");
        long[] vBad = s.kShape().clone();
        vBad[rnd.nextInt(4)] += 1;
        add(c, s, GQR_V_SHAPE, q, withV(cache, f.random(dt, vBad)), lens, out, lse, true, "cache");
        add(c, s, GQR_V_DEVICE, q, withV(cache, f.elsewhere(dt, s.kShape())), lens, out, lse, true, "cache");
        c.whereStridable(GQR_V_CONTIGUOUS,
                () -> add(c, s, GQR_V_CONTIGUOUS, q, withV(cache, f.strided(dt, s.kShape())), lens, out, lse, true, "cache"), s.kShape());
        long[] ts = pc.blockTable().shape();
        add(c, paged, GQR_TABLE_NULL, paged.q(), withTable(pc, null), paged.lens(), paged.out(), paged.lse(), true, "cache");
        add(c, paged, GQR_TABLE_CLOSED, paged.q(), withTable(pc, f.closed(DType.I32, ts)), paged.lens(), paged.out(), paged.lse(), true, "cache");
        add(c, paged, GQR_TABLE_DTYPE, paged.q(), withTable(pc, f.random(DType.F32, ts)), paged.lens(), paged.out(), paged.lse(), true, "cache");
        long[] tBad = rnd.nextBoolean() ? new long[] {ts[0] + 1, ts[1]} : new long[] {ts[0], ts[1] + 1};
        add(c, paged, GQR_TABLE_SHAPE, paged.q(), withTable(pc, f.ints(new int[(int) (tBad[0] * tBad[1])], tBad)), paged.lens(), paged.out(),
                paged.lse(), false, "cache");
        add(c, paged, GQR_TABLE_DEVICE, paged.q(), withTable(pc, f.elsewhere(DType.I32, ts)), paged.lens(), paged.out(), paged.lse(), true, "cache");
        c.whereStridable(GQR_TABLE_CONTIGUOUS,
                () -> add(c, paged, GQR_TABLE_CONTIGUOUS, paged.q(), withTable(pc, f.strided(DType.I32, ts)), paged.lens(), paged.out(), paged.lse(), true, "cache"), ts);
        KvCache cc = contiguous.cache();
        add(c, contiguous, GQR_TABLE_FOR_CONTIGUOUS, contiguous.q(), withTable(cc, f.ints(new int[] {0}, 1, 1)), contiguous.lens(), contiguous.out(),
                contiguous.lse(), true, "cache");
        // page numbers: checked wherever the table is host-readable (the CPU path)
        Fixture cpu = f.gpu() ? f.track(new Fixture(Device.CPU, rnd.nextLong())) : f;
        Step hostPaged = f.gpu() ? Step.on(cpu, dt, KvLayout.PAGED, 1, 1, 1, 64, 4, 1, false) : paged;
        int[] fullLens = new int[hostPaged.problem().batch()];
        java.util.Arrays.fill(fullLens, hostPaged.problem().maxLen());
        Tensor hostLens = cpu.ints(fullLens, fullLens.length);
        int[] badTable = hostPaged.cache().blockTable().toIntArray();
        badTable[rnd.nextInt(badTable.length)] = rnd.nextBoolean() ? -1 - rnd.nextInt(4) : (int) hostPaged.pages() + rnd.nextInt(4);
        KvCache badPages = withTable(hostPaged.cache(), cpu.ints(badTable, hostPaged.cache().blockTable().shape()));
        add(c, hostPaged, GQR_TABLE_PAGES, hostPaged.q(), badPages, hostLens, hostPaged.out(), hostPaged.lse(), true, "cache");
        add(c, s, GQR_LENS_NULL, q, cache, null, out, lse, true, "lens");
        add(c, s, GQR_LENS_CLOSED, q, cache, f.closed(DType.I32, b), out, lse, true, "lens");
        add(c, s, GQR_LENS_DTYPE, q, cache, f.random(rnd.nextBoolean() ? DType.F32 : DType.I8, b), out, lse, true, "lens");
        add(c, s, GQR_LENS_SHAPE, q, cache, f.ints(new int[b + 1], rnd.nextBoolean() ? new long[] {b + 1} : new long[] {1, b + 1}), out, lse, true, "lens");
        add(c, s, GQR_LENS_DEVICE, q, cache, f.elsewhere(DType.I32, b), out, lse, true, "lens");
        c.whereStridable(GQR_LENS_CONTIGUOUS,
                () -> add(c, s, GQR_LENS_CONTIGUOUS, q, cache, f.strided(DType.I32, b), out, lse, true, "lens"), b);
        add(c, s, GQR_OUT_NULL, q, cache, lens, null, lse, false, "out");
        add(c, s, GQR_OUT_CLOSED, q, cache, lens, f.closed(dt, q.shape()), lse, true, "out");
        add(c, s, GQR_OUT_DTYPE, q, cache, lens, f.poisoned(rnd.nextBoolean() ? otherDt : DType.F32, q.shape()), lse, true, "out");
        add(c, s, GQR_OUT_SHAPE, q, cache, lens, f.poisoned(dt, qBad[rnd.nextInt(3)]), lse, true, "out");
        add(c, s, GQR_OUT_DEVICE, q, cache, lens, f.elsewhere(dt, q.shape()), lse, true, "out");
        c.whereStridable(GQR_OUT_CONTIGUOUS,
                () -> add(c, s, GQR_OUT_CONTIGUOUS, q, cache, lens, f.strided(dt, q.shape()), lse, true, "out"), q.shape());
        add(c, s, GQR_LSE_CLOSED, q, cache, lens, out, f.closed(DType.F32, b, hq), true, "lse");
        add(c, s, GQR_LSE_DTYPE, q, cache, lens, out, f.poisoned(rnd.nextBoolean() ? dt : DType.I32, b, hq), true, "lse");
        add(c, s, GQR_LSE_SHAPE, q, cache, lens, out, f.poisoned(DType.F32, rnd.nextBoolean() ? new long[] {b, hq + 1} : new long[] {b * hq}), true, "lse");
        add(c, s, GQR_LSE_DEVICE, q, cache, lens, out, f.elsewhere(DType.F32, b, hq), true, "lse");
        c.whereStridable(GQR_LSE_CONTIGUOUS,
                () -> add(c, s, GQR_LSE_CONTIGUOUS, q, cache, lens, out, f.strided(DType.F32, b, hq), true, "lse"), b, hq);
        if (f.gpu()) {
            Step gp = paged;
            int[] full = new int[gp.problem().batch()];
            java.util.Arrays.fill(full, gp.problem().maxLen());
            int[] bt = gp.cache().blockTable().toIntArray();
            bt[rnd.nextInt(bt.length)] = rnd.nextBoolean() ? -1 - rnd.nextInt(4) : (int) gp.pages() + rnd.nextInt(4);
            KvCache devBad = withTable(gp.cache(), f.ints(bt, gp.cache().blockTable().shape()));
            Tensor devFull = f.ints(full, full.length);
            c.add(GQR_TABLE_PAGES_DEBUG, "plan.run(q, cache, lens, out, lse, stream) with -D" + GqaDecodePlan.DEBUG_CHECK_BLOCK_TABLE,
                    () -> RuleCheck.withProperty(GqaDecodePlan.DEBUG_CHECK_BLOCK_TABLE, () -> gp.plan().run(gp.q(), devBad, devFull, gp.out(), gp.lse(), null)));
            // the same table without the check: the kernels clamp the entry into [0, P) (RuleCheck synchronises: a
            // read outside the cache would fault here, and memcheck reports it). The call completes and writes, so
            // into outputs of its own, not the step's, which the rule checks expect untouched.
            Tensor clampOut = f.poisoned(gp.problem().dtype(), gp.q().shape());
            Tensor clampLse = f.poisoned(DType.F32, gp.problem().batch(), gp.problem().qHeads());
            c.add(GQR_TABLE_CLAMPED, "plan.run(q, cache, lens, out, lse, stream)", () -> gp.plan().run(gp.q(), devBad, devFull, clampOut, clampLse, null));
            int[] wild = new int[b];
            for (int i = 0; i < b; i++) {
                wild[i] = rnd.nextBoolean() ? -1 - rnd.nextInt(1000) : p.maxLen() + 1 + rnd.nextInt(1000);
            }
            Tensor wildLens = f.ints(wild, b);
            Tensor scratch = f.poisoned(dt, q.shape());
            Tensor scratchLse = f.poisoned(DType.F32, b, hq);
            c.add(GQR_LENS_CLAMPED, "plan.run(q, cache, lens, out, lse, stream)", () -> s.plan().run(q, cache, wildLens, scratch, scratchLse, null));
            add(c, s, GQR_Q_ALIGN, f.misaligned(dt, 16, q.shape()), cache, lens, out, lse, true, "q");
            add(c, s, GQR_K_ALIGN, q, withK(cache, f.misaligned(dt, 16, s.kShape())), lens, out, lse, true, "cache");
            add(c, s, GQR_V_ALIGN, q, withV(cache, f.misaligned(dt, 16, s.kShape())), lens, out, lse, true, "cache");
            add(c, s, GQR_OUT_ALIGN, q, cache, lens, f.misaligned(dt, 16, q.shape()), lse, true, "out");
            // out or lse overlapping an input, or lse overlapping out (one allocation; out 16-byte aligned inside it)
            long eb = dt.bytes();
            long[] lseShape = {b, hq};
            for (int lseCase = 0; lseCase < 2; lseCase++) {
                boolean onLse = lseCase == 1;
                ValidationRule rule = onLse ? GQR_LSE_OVERLAP : GQR_OUT_OVERLAP;
                String target = onLse ? "lse" : "out";
                DType ot = onLse ? DType.F32 : dt;
                long[] os = onLse ? lseShape : q.shape();
                long unit = onLse ? 4 : 16;
                Tensor[] oq = f.overlappingBytes(dt, q.shape(), ot, os, f.shiftWithin(q.numel() * eb, unit));
                add(c, s, rule, oq[0], cache, lens, onLse ? out : oq[1], onLse ? oq[1] : lse, true, target);
                Tensor[] ok = f.overlappingBytes(dt, s.kShape(), ot, os, f.shiftWithin(Fixture.numel(s.kShape()) * eb, unit));
                add(c, s, rule, q, withK(cache, ok[0]), lens, onLse ? out : ok[1], onLse ? ok[1] : lse, true, target);
                Tensor[] ov = f.overlappingBytes(dt, s.kShape(), ot, os, f.shiftWithin(Fixture.numel(s.kShape()) * eb, unit));
                add(c, s, rule, q, withV(cache, ov[0]), lens, onLse ? out : ov[1], onLse ? ov[1] : lse, true, target);
                Tensor[] ol = f.overlappingBytes(DType.I32, new long[] {b}, ot, os, f.shiftWithin(4L * b, unit));
                add(c, s, rule, q, cache, ol[0], onLse ? out : ol[1], onLse ? ol[1] : lse, true, target);
                Step pg = paged;
                long[] pts = pg.cache().blockTable().shape();
                DType pt = pg.problem().dtype();
                long[] pos = onLse ? new long[] {pg.problem().batch(), pg.problem().qHeads()} : pg.q().shape();
                Tensor[] otb = f.overlappingBytes(DType.I32, pts, onLse ? DType.F32 : pt, pos, f.shiftWithin(4L * Fixture.numel(pts), unit));
                add(c, pg, rule, pg.q(), withTable(pg.cache(), otb[0]), pg.lens(), onLse ? pg.out() : otb[1], onLse ? otb[1] : pg.lse(), true,
                        target);
            }
            Tensor[] oo = f.overlappingBytes(dt, q.shape(), DType.F32, lseShape, f.shiftWithin(q.numel() * eb, 4));
            add(c, s, GQR_LSE_OVERLAP, q, cache, lens, oo[0], oo[1], true, "lse");
            RuleCheck.streamCases(c, f, GQR_STREAM_CLOSED, GQR_STREAM_DEVICE, java.util.Map.of(
                    "plan.run(q, cache, lens, out, lse, stream)", st -> () -> s.plan().run(q, cache, lens, out, lse, st),
                    "plan(problem, device, options, stream)", st -> () -> RuleCheck.discard(GqaDecode.plan(p, dev, Options.defaults(), st)),
                    "decode(q, cache, lens, out, lse, options, stream)", st -> () -> GqaDecode.decode(q, cache, lens, out, lse, Options.defaults(), st)));
        }
        return c;
    }

    /** The base step and the two auxiliary ones (a PAGED and a contiguous step) the layout-specific rules need. */
    static Step[] steps(Fixture f, boolean bf16, int li, int b, int hkv, int g, boolean d128, int len, int pageShift, boolean withLse) {
        DType dt = bf16 ? DType.BF16 : DType.F16;
        KvLayout layout = KvLayout.values()[li];
        Step s = Step.on(f, dt, layout, b, hkv, g, d128 ? 128 : 64, len, pageShift, withLse);
        Step paged = layout == KvLayout.PAGED ? s : Step.on(f, dt, KvLayout.PAGED, 1, 1, 1 + f.rnd.nextInt(2), 64, 1 + f.rnd.nextInt(8), 1, f.rnd.nextBoolean());
        Step cont = layout != KvLayout.PAGED && len > 1 ? s
                : Step.on(f, dt, f.rnd.nextBoolean() ? KvLayout.BHLD : KvLayout.BLHD, 1, 1, 1 + f.rnd.nextInt(2), 64, 2 + f.rnd.nextInt(6), 0, f.rnd.nextBoolean());
        return new Step[] {s, paged, cont};
    }

    @Property(tries = 20)
    @Covers({GQ_PROBLEM_BATCH, GQ_PROBLEM_QHEADS, GQ_PROBLEM_KVHEADS, GQ_PROBLEM_HEADDIM, GQ_PROBLEM_MAXLEN, GQ_PROBLEM_LAYOUT, GQ_PROBLEM_DTYPE,
            GQ_PROBLEM_PAGESIZE, GQ_PROBLEM_MAXPAGES, GQ_PROBLEM_CONTIGUOUS_PAGING, GQ_OPTIONS_BACKEND, GQ_OPTIONS_SCALE, GQ_PLAN_PROBLEM_NULL,
            GQ_PLAN_DEVICE_NULL, GQ_PLAN_OPTIONS_NULL, GQ_DECIDE_INFO_NULL, GQ_OF_Q_NULL, GQ_OF_Q_CLOSED, GQ_OF_Q_RANK, GQ_OF_Q_DTYPE,
            GQ_OF_Q_INT32, GQ_OF_CACHE_NULL, GQ_OF_CACHE_LAYOUT, GQ_OF_K_NULL, GQ_OF_K_CLOSED, GQ_OF_K_RANK, GQ_OF_K_INT32, GQ_OF_TABLE_NULL,
            GQ_OF_TABLE_CLOSED, GQ_OF_TABLE_RANK, GQ_OF_TABLE_INT32, GQ_CUSTOM_UNSUPPORTED, GQ_VENDOR_UNSUPPORTED, GQ_NO_BACKEND,
            GQR_PLAN_CLOSED, GQR_Q_NULL, GQR_Q_CLOSED, GQR_Q_DTYPE, GQR_Q_SHAPE, GQR_Q_DEVICE, GQR_Q_CONTIGUOUS, GQR_CACHE_NULL,
            GQR_CACHE_LAYOUT, GQR_K_NULL, GQR_K_CLOSED, GQR_K_DTYPE, GQR_K_SHAPE, GQR_K_CAPACITY, GQR_K_DEVICE, GQR_K_CONTIGUOUS, GQR_V_NULL,
            GQR_V_CLOSED, GQR_V_DTYPE, GQR_V_SHAPE, GQR_V_DEVICE, GQR_V_CONTIGUOUS, GQR_TABLE_NULL, GQR_TABLE_CLOSED, GQR_TABLE_DTYPE,
            GQR_TABLE_SHAPE, GQR_TABLE_DEVICE, GQR_TABLE_CONTIGUOUS, GQR_TABLE_FOR_CONTIGUOUS, GQR_TABLE_PAGES, GQR_LENS_NULL, GQR_LENS_CLOSED,
            GQR_LENS_DTYPE, GQR_LENS_SHAPE, GQR_LENS_DEVICE, GQR_LENS_CONTIGUOUS, GQR_OUT_NULL, GQR_OUT_CLOSED, GQR_OUT_DTYPE, GQR_OUT_SHAPE,
            GQR_OUT_DEVICE, GQR_OUT_CONTIGUOUS, GQR_LSE_CLOSED, GQR_LSE_DTYPE, GQR_LSE_SHAPE, GQR_LSE_DEVICE, GQR_LSE_CONTIGUOUS})
    void everyRuleIsEnforcedBeforeAnyWork(@ForAll boolean bf16, @ForAll @IntRange(min = 0, max = 2) int li,
                                          @ForAll @IntRange(min = 1, max = 3) int b, @ForAll @IntRange(min = 1, max = 2) int hkv,
                                          @ForAll @IntRange(min = 1, max = 4) int g, @ForAll boolean d128,
                                          @ForAll @IntRange(min = 1, max = 12) int len, @ForAll @IntRange(min = 0, max = 3) int pageShift,
                                          @ForAll boolean withLse, @ForAll long seed) {
        try (Fixture f = new Fixture(Device.CPU, seed)) {
            Step[] st = steps(f, bf16, li, b, hkv, g, d128, len, pageShift, withLse);
            Step s = st[0];
            java.util.List<Tensor> outs = new java.util.ArrayList<>();
            for (Step x : st) {
                outs.add(x.out());
                if (x.lse() != null) {
                    outs.add(x.lse());
                }
            }
            RuleCheck.run(f, cases(f, s, st[1], st[2]), s::run, outs.stream().distinct().toArray(Tensor[]::new));
        }
    }
}
