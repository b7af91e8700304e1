package dev.gapfill.verify;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.GqaDecode;
import dev.gapfill.ops.GqaDecode.KvCache;
import dev.gapfill.ops.GqaDecode.KvLayout;
import dev.gapfill.ops.reference.GqaDecodeReference;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** On the CPU: the layouts of GqaDecodeProblems hold the same logical cache, and the CPU backend meets the bound. */
class GqaDecodeProblemsProperties {
    @Property(tries = 15)
    void everyLayoutGivesTheSameReference(@ForAll @IntRange(min = 1, max = 3) int b, @ForAll @IntRange(min = 1, max = 40) int cap,
                                          @ForAll @IntRange(min = 0, max = 2) int pageIndex, @ForAll long seed) {
        Random rnd = new Random(seed);
        int[] lens = new int[b];
        for (int i = 0; i < b; i++) {
            lens[i] = rnd.nextInt(cap + 1);
        }
        int ps = new int[] {1, 4, 16}[pageIndex];
        try (GqaDecodeProblems.HostCase host = GqaDecodeProblems.random(rnd, DType.BF16, 4, 2, 64, cap, lens)) {
            GqaDecodeReference.Exact base = GqaDecodeReference.exact(host.q(), KvCache.bhld(host.k(), host.v()), lens, cap, 0.125);
            for (KvLayout layout : KvLayout.values()) {
                KvCache c = GqaDecodeProblems.relayout(host.k(), host.v(), layout, ps, rnd);
                try {
                    GqaDecodeReference.Exact ex = GqaDecodeReference.exact(host.q(), c, lens, cap, 0.125);
                    assertArrayEquals(base.out(), ex.out(), layout.toString());
                    assertArrayEquals(base.lse(), ex.lse(), layout.toString());
                } finally {
                    GqaDecodeProblems.close(c);
                }
            }
        }
    }

    /** The CPU backend (fp64 then one rounding) is within the bound it documents, for every small problem. */
    @Property(tries = 20)
    void cpuBackendMeetsTheBound(@ForAll("problems") GqaDecode.Problem p, @ForAll long seed) {
        Random rnd = new Random(seed);
        int[] lens = new int[p.batch()];
        for (int i = 0; i < lens.length; i++) {
            lens[i] = rnd.nextInt(p.maxLen() + 1);
        }
        try (GqaDecodeProblems.HostCase host = GqaDecodeProblems.random(rnd, p.dtype(), p.qHeads(), p.kvHeads(), p.headDim(), p.maxLen(), lens);
             Tensor lt = Tensor.ofInts(Device.CPU, lens, p.batch());
             Tensor out = Tensor.empty(Device.CPU, p.dtype(), p.batch(), p.qHeads(), p.headDim());
             Tensor lse = Tensor.empty(Device.CPU, DType.F32, p.batch(), p.qHeads())) {
            KvCache c = GqaDecodeProblems.relayout(host.k(), host.v(), p.layout(), p.layout() == KvLayout.PAGED ? p.pageSize() : 16, rnd);
            try {
                GqaDecode.decode(host.q(), c, lt, out, lse, GqaDecode.Options.defaults(), null);
                GqaDecodeReference.Exact ex = GqaDecodeReference.exact(host.q(), KvCache.bhld(host.k(), host.v()), lens, p.maxLen(),
                        1 / Math.sqrt(p.headDim()));
                Verdict vo = Verifier.compare(out, ex.out(), ex.absTerms(), AttentionTolerance.output(p.dtype(), ex, p.headDim(), false), "reference");
                assertTrue(vo.pass(), p + " " + Arrays.toString(lens) + ": " + vo);
                assertTrue(vo.maxUlp() <= 1, "one rounding of the exact value: " + vo);
                assertTrue(AttentionTolerance.compareLse(lse, ex, p.headDim()).pass());
            } finally {
                GqaDecodeProblems.close(c);
            }
        }
    }

    @Provide Arbitrary<GqaDecode.Problem> problems() { return GqaDecodeProblems.smallProblems(); }

    @Provide Arbitrary<GqaDecode.Problem> longer() { return GqaDecodeProblems.problems(2, 8, 4096); }

    /** The bounded form stays within its bounds and gives problems the op accepts (its own constructor checks them). */
    @Property(tries = 100)
    void boundedProblemsStayWithinTheirBounds(@ForAll("longer") GqaDecode.Problem p) {
        assertTrue(p.batch() >= 1 && p.batch() <= 2 && p.kvHeads() >= 1 && p.kvHeads() <= 8 && p.maxLen() >= 1 && p.maxLen() <= 4096, p.toString());
        assertTrue(p.qHeads() % p.kvHeads() == 0 && (p.headDim() == 64 || p.headDim() == 128 || p.headDim() == 256), p.toString());
    }

    @org.junit.jupiter.api.Test void boundsBelowOneAreNamed() {
        org.junit.jupiter.api.Assertions.assertEquals("maxBatch", org.junit.jupiter.api.Assertions.assertThrows(
                dev.gapfill.core.ArgumentException.class, () -> GqaDecodeProblems.problems(0, 1, 1)).argument());
        org.junit.jupiter.api.Assertions.assertEquals("maxKvHeads", org.junit.jupiter.api.Assertions.assertThrows(
                dev.gapfill.core.ArgumentException.class, () -> GqaDecodeProblems.problems(1, 0, 1)).argument());
        org.junit.jupiter.api.Assertions.assertEquals("maxLen", org.junit.jupiter.api.Assertions.assertThrows(
                dev.gapfill.core.ArgumentException.class, () -> GqaDecodeProblems.problems(1, 1, 0)).argument());
        // bounds that could draw a problem a backend refuses: Hq = 12·Hkv overflowing B·Hq's grid, or B·Hq·maxLen past 32 bits
        org.junit.jupiter.api.Assertions.assertEquals("maxKvHeads", org.junit.jupiter.api.Assertions.assertThrows(
                dev.gapfill.core.ArgumentException.class, () -> GqaDecodeProblems.problems(1, 200_000_000, 1)).argument());
        org.junit.jupiter.api.Assertions.assertEquals("maxLen", org.junit.jupiter.api.Assertions.assertThrows(
                dev.gapfill.core.ArgumentException.class, () -> GqaDecodeProblems.problems(128, 16, 131072)).argument());
        GqaDecodeProblems.problems(2, 8, 4096);  // the property above's bounds are taken
    }
}
