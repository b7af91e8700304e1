package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
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

    @Test void decideOnTheCpuIsTheReference() {
        Problem p = Problem.contiguous(1, 8, 2, 128, 100, KvLayout.BHLD, DType.F16);
        assertEquals(Backend.REFERENCE, GqaDecode.decide(p, CPU, Options.defaults()).backend());
        // AUTO on a GPU: the custom kernel (faster than the cuBLAS composition on every harness row)
        assertEquals(Backend.CUSTOM, GqaDecode.decide(p, dev.gapfill.core.DeviceInfo.h100ForTests(), Options.defaults()).backend());
        assertEquals(Backend.VENDOR, GqaDecode.decide(p, dev.gapfill.core.DeviceInfo.h100ForTests(),
                Options.defaults().withBackend(Backend.VENDOR)).backend());
    }
}
