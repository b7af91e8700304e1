package dev.gapfill.verify;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.UnsupportedShapeException;
import dev.gapfill.core.testing.Busy;
import dev.gapfill.core.testing.GpuTest;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.core.testing.SystemProperty;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.GqaDecode;
import dev.gapfill.ops.GqaDecode.KvCache;
import dev.gapfill.ops.GqaDecode.KvLayout;
import dev.gapfill.ops.GqaDecode.Options;
import dev.gapfill.ops.GqaDecodePlan;
import dev.gapfill.ops.reference.GqaDecodeReference;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.bytedeco.cuda.cudart.CUgraphExec_st;
import org.bytedeco.cuda.cudart.CUgraph_st;
import org.bytedeco.cuda.global.cudart;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * GqaDecode on the GPU: CUSTOM and VENDOR forced (and AUTO) against the fp64 reference, every element of o and of
 * lse, outputs poisoned before each run, random data (never zeros).
 *
 * <p>Bound (AttentionTolerance, derived there): |o − ref| ≤ u_T·|ref| + 2·γ_k·Σ_j p_j|v_j| with
 * k = maxLen + 2(D+8)·max(1, σ) + 64, plus u_T·Σ_j p_j|v_j| because both GPU paths round P to the cache dtype
 * before P·V. o is a convex combination of V rows, so Σ_j p_j|v_j| bounds |o| and every rounding of the terms.
 */
@GpuTest
class GqaDecodeGpuTest {
    private static final Device GPU = Device.cuda(0);
    private static final int[] LENS = {0, 1, 17, 1000};

    /** Runs one case on {@code backend} and checks o and lse; returns o's bits for layout comparisons. */
    private static short[] checkCase(String label, DType dt, int d, int g, int hkv, KvLayout layout, int pageSize, int[] lens, int cap,
                                     Backend backend, long seed) {
        return checkCase(label, dt, d, g, hkv, layout, pageSize, lens, cap, backend, seed, 0);
    }

    /** As above; {@code warps} > 0: the plan must run blocks of that many warps. */
    private static short[] checkCase(String label, DType dt, int d, int g, int hkv, KvLayout layout, int pageSize, int[] lens, int cap,
                                     Backend backend, long seed, int warps) {
        return checkCase(label, dt, d, g, hkv, layout, pageSize, lens, cap, backend, seed, warps, null);
    }

    /** As above; {@code editHostCache} (if not null) changes the host cache before it goes to the GPU. */
    private static short[] checkCase(String label, DType dt, int d, int g, int hkv, KvLayout layout, int pageSize, int[] lens, int cap,
                                     Backend backend, long seed, int warps, java.util.function.Consumer<KvCache> editHostCache) {
        return checkCase(label, dt, d, g, hkv, layout, pageSize, lens, cap, backend, seed, warps, editHostCache, -1);
    }

    /** As above; {@code cluster} ≥ 0: the plan's thread-block cluster size must be that (0: none). */
    private static short[] checkCase(String label, DType dt, int d, int g, int hkv, KvLayout layout, int pageSize, int[] lens, int cap,
                                     Backend backend, long seed, int warps, java.util.function.Consumer<KvCache> editHostCache,
                                     int cluster) {
        Random rnd = new Random(seed);
        int b = lens.length;
        try (GqaDecodeProblems.HostCase host = GqaDecodeProblems.random(rnd, dt, hkv * g, hkv, d, cap, lens)) {
            KvCache hostCache = GqaDecodeProblems.relayout(host.k(), host.v(), layout, pageSize, new Random(seed + 1));
            if (editHostCache != null) {
                editHostCache.accept(hostCache);
            }
            KvCache cache = GqaDecodeProblems.to(hostCache, GPU);
            GqaDecodeProblems.close(hostCache);
            GqaDecodeReference.Exact ex = GqaDecodeReference.exact(host.q(), KvCache.bhld(host.k(), host.v()), lens, cap, 1 / Math.sqrt(d));
            try (Stream s = Stream.create(GPU); Tensor q = host.q().to(GPU); Tensor lensT = Tensor.ofInts(GPU, lens, b);
                 Tensor out = Poison.poisoned(GPU, dt, b, hkv * g, d); Tensor lse = Poison.poisoned(GPU, DType.F32, b, hkv * g);
                 GqaDecodePlan plan = GqaDecode.plan(GqaDecodeProblems.problem(q, cache, cap), GPU, Options.defaults().withBackend(backend), s)) {
                if (backend != Backend.AUTO) {
                    assertEquals(backend, plan.decision().backend(), label);
                }
                if (warps > 0) {
                    assertEquals(warps, plan.warps(), label + ": " + plan);
                }
                if (cluster >= 0) {
                    assertEquals(cluster, plan.cluster(), label + ": " + plan);
                    // the plan's decision names the kernel that runs (the cluster one only where a cluster runs)
                    assertEquals(cluster > 0, plan.decision().variant().startsWith("decode_mma_c"), label + ": " + plan);
                }
                plan.run(q, cache, lensT, out, lse, s);
                s.synchronize();
                boolean pRounded = AttentionTolerance.roundsProbabilities(plan.decision().backend());
                String where = label + " " + plan;
                Verdict vo = Verifier.compare(out, ex.out(), ex.absTerms(), AttentionTolerance.output(dt, ex, d, pRounded), "reference");
                assertTrue(vo.pass(), where + ": " + vo);
                Verdict vl = AttentionTolerance.compareLse(lse, ex, d);
                assertTrue(vl.pass(), where + ": " + vl);
                return bits(out);
            } finally {
                GqaDecodeProblems.close(cache);
            }
        }
    }

    private static void sweep(int d) {
        for (DType dt : new DType[] {DType.F16, DType.BF16}) {
            for (int g : new int[] {1, 4, 8}) {
                for (Backend backend : new Backend[] {Backend.CUSTOM, Backend.VENDOR}) {
                    if (backend == Backend.CUSTOM && customRefused(GqaDecode.Problem.contiguous(LENS.length, g, 1, d, 1000, KvLayout.BHLD, dt))) {
                        continue;  // a device without the shared memory for this D (sm_86/89 at D = 256): the refusal was checked
                    }
                    short[] first = null;
                    for (KvLayout layout : KvLayout.values()) {
                        String label = dt + " D=" + d + " G=" + g + " Hkv=1 " + layout + " lens " + Arrays.toString(LENS) + " " + backend;
                        short[] bits = checkCase(label, dt, d, g, 1, layout, 16, LENS, 1000, backend, 1000L * d + g);
                        if (backend == Backend.CUSTOM) {
                            // same logical inputs, same summation order: paged and BLHD equal BHLD bit for bit
                            if (first == null) {
                                first = bits;
                            } else {
                                assertArrayEquals(first, bits, label + ": differs from BHLD");
                            }
                        }
                    }
                }
            }
        }
    }

    @Test void d64MatchesTheReference() { sweep(64); }

    @Test void d128MatchesTheReference() { sweep(128); }

    @Test void d256MatchesTheReference() { sweep(256); }

    /**
     * Whether this device's custom kernels cannot take {@code p} ({@code GqaDecodeHeuristics.customUnsupported}: the D = 256
     * kernel and the 8-warp D = 64 one need more shared memory than sm_86/89 give a block). Where they cannot, forcing
     * CUSTOM must be refused, before anything runs, with an {@link UnsupportedShapeException}; that is checked here.
     */
    private static boolean customRefused(GqaDecode.Problem p) {
        if (dev.gapfill.ops.GqaDecodeHeuristics.customUnsupported(p, Gpu.device(GPU).info()) == null) {
            return false;
        }
        assertThrows(dev.gapfill.core.UnsupportedShapeException.class, () -> GqaDecode.plan(p, GPU, Options.defaults().withBackend(Backend.CUSTOM), null).close(),
                "forced CUSTOM on " + p + " must be refused on " + Gpu.device(GPU).info());
        return true;
    }

    /** Whether this device gives a block the shared memory of the 8-warp D = 64 kernel (sm_80 and sm_90 do, sm_86/89 do not). */
    private static boolean wideKernelFits() {
        long optin = Gpu.device(GPU).info().smemPerBlockOptin();
        return dev.gapfill.ops.GqaDecodeHeuristics.sharedBytes(64, dev.gapfill.ops.GqaDecodeHeuristics.WIDE_WARPS) <= optin;
    }

    @Test void d64WideBlocksOnEveryPageSize() {
        if (!wideKernelFits()) {  // sm_86/89: the plans never take the 8-warp kernel; the 4-warp one runs every D = 64 case
            GqaDecode.Problem p = GqaDecode.Problem.contiguous(1, 24, 2, 64, 20000, KvLayout.BHLD, DType.F16);
            assertEquals(4, dev.gapfill.ops.GqaDecodeHeuristics.splits(p, Gpu.device(GPU).info()).warps(), "no wide blocks here");
            return;
        }
        // D = 64 with 2 or more splits runs the 8-warp kernel (GqaDecodeHeuristics.splits): with half the splits where
        // the 4-warp chunk is small (B=6 L=1000: 8 of 128 keys become 4 of 256), with the same splits above
        // WIDE_HALVE_MAX_CHUNK (B=2 L=20000: 32 of 640, the second sequence's splits past 7777 idle). Its table
        // batches are dealt over 8 warps, so every page size: 4 (an entry per row), 16 (one per tile), 64, and BLHD;
        // G = 12 pads the tile
        // Case 0's plan would merge in a cluster on an sm_90 device (GqaDecodeHeuristics.withCluster: 4 blocks of 4
        // warps); this test keeps the 8-warp kernel under test there too, with the cluster merge switched off.
        int[][] cases = {{1000, 17, 0, 513, 64, 999}, {20000, 7777}};
        int[] caps = {1000, 20000};
        SystemProperty.with(GqaDecodePlan.DEBUG_NO_CLUSTER, "true", () -> wideCases(cases, caps));
    }

    private static void wideCases(int[][] cases, int[] caps) {
        for (int c = 0; c < cases.length; c++) {
            int[] lens = cases[c];
            int cap = caps[c];
            GqaDecode.Problem shape = GqaDecode.Problem.contiguous(lens.length, 24, 2, 64, cap, KvLayout.BHLD, DType.F16);
            dev.gapfill.ops.GqaDecodeHeuristics.Split split = dev.gapfill.ops.GqaDecodeHeuristics.splits(shape, Gpu.device(GPU).info());
            dev.gapfill.ops.GqaDecodeHeuristics.Split narrow = dev.gapfill.ops.GqaDecodeHeuristics.narrowSplits(shape, Gpu.device(GPU).info());
            assertEquals(dev.gapfill.ops.GqaDecodeHeuristics.WIDE_WARPS, split.warps(), "the case must reach the wide kernel: " + split);
            // case 0 halves the 4-warp count, case 1 keeps it
            assertEquals(c == 0, narrow.chunk() <= dev.gapfill.ops.GqaDecodeHeuristics.WIDE_HALVE_MAX_CHUNK, "case " + c + ": " + narrow);
            assertTrue(c == 0 ? split.splits() < narrow.splits() : split.equals(new dev.gapfill.ops.GqaDecodeHeuristics.Split(
                    narrow.splits(), narrow.chunk(), dev.gapfill.ops.GqaDecodeHeuristics.WIDE_WARPS)), "case " + c + ": " + split + " from " + narrow);
            for (DType dt : new DType[] {DType.F16, DType.BF16}) {
                String at = dt + " wide d64 L=" + cap;
                int w = dev.gapfill.ops.GqaDecodeHeuristics.WIDE_WARPS;
                short[] bhld = checkCase(at + " BHLD", dt, 64, 12, 2, KvLayout.BHLD, 16, lens, cap, Backend.CUSTOM, 64 + c, w);
                assertArrayEquals(bhld, checkCase(at + " BLHD", dt, 64, 12, 2, KvLayout.BLHD, 16, lens, cap, Backend.CUSTOM, 64 + c, w));
                for (int page : new int[] {4, 16, 64}) {
                    assertArrayEquals(bhld, checkCase(at + " page " + page, dt, 64, 12, 2, KvLayout.PAGED, page, lens, cap,
                            Backend.CUSTOM, 64 + c, w), at + " page " + page + ": differs from BHLD");
                }
            }
        }
    }

    @Test void twoStageD128EntriesMatchTheReferenceAndTheThreeStageBits() {
        // The 2-stage D = 128 entries (gqa_decode_mma_s2_*_d128) are what GPUs with 99 KiB of opt-in shared memory per
        // block run (sm_86, sm_89: GqaDecodeHeuristics.stages(int, DeviceInfo)); DEBUG_TWO_STAGES runs them here. Same
        // loads, mma and merge order as the default entries, so the same bits: F16 and BF16, one split and several,
        // G < 16 and G > 16 (two head tiles), zero and short lengths, contiguous and paged caches.
        Object[][] cases = {  // dtype, G, Hkv, layout, page, lens, cap
            {DType.F16, 4, 8, KvLayout.BHLD, 16, new int[] {512}, 512},
            {DType.BF16, 7, 4, KvLayout.PAGED, 16, new int[] {2048, 1, 0, 700}, 2048},
            {DType.F16, 20, 2, KvLayout.BLHD, 16, new int[] {3000, 17}, 4096},
            {DType.BF16, 8, 2, KvLayout.PAGED, 64, new int[] {20000, 5000, 9}, 20000},
            {DType.F16, 4, 8, KvLayout.BHLD, 16, new int[] {100, 64, 63}, 128},
        };
        for (Object[] c : cases) {
            DType dt = (DType) c[0];
            int g = (Integer) c[1];
            int hkv = (Integer) c[2];
            KvLayout layout = (KvLayout) c[3];
            int page = (Integer) c[4];
            int[] lens = (int[]) c[5];
            int cap = (Integer) c[6];
            String at = dt + " d128 " + hkv * g + "/" + hkv + " " + layout + " lens " + Arrays.toString(lens) + " cap " + cap;
            short[][] three = new short[1][];
            SystemProperty.with(GqaDecodePlan.DEBUG_NO_CLUSTER, "true", () ->  // the default entries with the global merge
                    three[0] = checkCase(at + " 3 stages", dt, 128, g, hkv, layout, page, lens, cap, Backend.CUSTOM, 1280 + g, 4, null, 0));
            SystemProperty.with(GqaDecodePlan.DEBUG_TWO_STAGES, "true", () -> {
                short[] two = checkCase(at + " 2 stages", dt, 128, g, hkv, layout, page, lens, cap, Backend.CUSTOM, 1280 + g, 4, null, 0);
                assertArrayEquals(three[0], two, at + ": the 2-stage entries differ from the 3-stage ones");
                try (GqaDecodePlan plan = GqaDecode.plan(GqaDecode.Problem.contiguous(lens.length, hkv * g, hkv, 128, cap, KvLayout.BHLD, dt),
                        GPU, Options.defaults().withBackend(Backend.CUSTOM), null)) {
                    assertTrue(plan.decision().variant().startsWith("decode_mma_s2_d128_"), at + ": " + plan.decision());
                }
            });
        }
    }

    @Test void clusterMergeMatchesTheReferenceAndTheGlobalMerge() {
        // On compute capability 9.0, plans of few blocks with short chunks merge their splits inside a thread-block
        // cluster, through distributed shared memory (GqaDecodeHeuristics.withCluster). Each case runs that way and with
        // the global merge (DEBUG_NO_CLUSTER), both within the reference's tolerance. Lengths of 0 and 1 and short ones
        // leave one active split, or inactive blocks beside active ones in a cluster; every D; F16 and BF16; contiguous
        // and paged caches. Elsewhere the same cases check that no cluster is taken.
        var info = Gpu.device(GPU).info();
        Object[][] cases = {  // dtype, D, G, Hkv, layout, page, lens, cap
            {DType.F16, 128, 4, 8, KvLayout.BHLD, 16, new int[] {512}, 512},
            {DType.BF16, 128, 7, 4, KvLayout.PAGED, 16, new int[] {2048, 1, 0, 700}, 2048},
            {DType.F16, 64, 8, 2, KvLayout.PAGED, 64, new int[] {512, 300, 65, 1}, 512},
            {DType.BF16, 64, 8, 2, KvLayout.BLHD, 16, new int[] {2048}, 2048},
            {DType.F16, 256, 4, 2, KvLayout.PAGED, 4, new int[] {1024, 0, 5}, 1024},
            {DType.F16, 128, 1, 8, KvLayout.BHLD, 16, new int[] {256, 255, 129}, 256},
        };
        int clustered = 0;
        for (Object[] c : cases) {
            DType dt = (DType) c[0];
            int d = (Integer) c[1];
            int g = (Integer) c[2];
            int hkv = (Integer) c[3];
            KvLayout layout = (KvLayout) c[4];
            int page = (Integer) c[5];
            int[] lens = (int[]) c[6];
            int cap = (Integer) c[7];
            GqaDecode.Problem shape = layout == KvLayout.PAGED
                    ? new GqaDecode.Problem(lens.length, hkv * g, hkv, d, cap, layout, page, (cap + page - 1) / page, dt)
                    : GqaDecode.Problem.contiguous(lens.length, hkv * g, hkv, d, cap, layout, dt);
            if (customRefused(shape)) {
                continue;  // D = 256 on sm_86/89: refused, checked
            }
            var plan = dev.gapfill.ops.GqaDecodeHeuristics.splits(shape, info);
            int expect = dev.gapfill.ops.GqaDecodeHeuristics.withCluster(shape, plan, info).cluster();
            clustered += expect > 0 ? 1 : 0;
            String at = dt + " d" + d + " " + hkv * g + "/" + hkv + " " + layout + " lens " + Arrays.toString(lens) + " cap " + cap;
            checkCase(at + " cluster " + expect, dt, d, g, hkv, layout, page, lens, cap, Backend.CUSTOM, 900 + d, 0, null, expect);
            SystemProperty.with(GqaDecodePlan.DEBUG_NO_CLUSTER, "true",
                    () -> checkCase(at + " global merge", dt, d, g, hkv, layout, page, lens, cap, Backend.CUSTOM, 900 + d, 0, null, 0));
        }
        if (info.cc() == 90) {
            assertEquals(cases.length, clustered, "every case here takes a cluster on an sm_90 device");
        } else {
            assertEquals(0, clustered, "no cluster below or above compute capability 9.0");
        }
    }

    @Test void blockTableEntriesPastEachLengthMayHoldAnything() {
        // The contract checks page numbers only below each length (GqaDecodePlan's debug check). The custom kernel
        // requests the entries of a split's first tiles before the length arrives, so it reads entries past the end:
        // they must never reach an address. Entries past ceil(len_b / pageSize) hold -1, MIN_VALUE, MAX_VALUE and
        // P (one past the last page); the result must equal, bit for bit, that of the untouched table. Pages of 16
        // and 64 (an entry per tile), 4 (an entry per row); D = 64 (wide blocks) and 128; both backends.
        int[] lens = {1000, 17, 0, 513, 1};
        int cap = 1000;
        int[] junk = {-1, Integer.MIN_VALUE, Integer.MAX_VALUE, 0};
        for (int d : new int[] {64, 128}) {
            for (int page : new int[] {4, 16, 64}) {
                for (Backend backend : new Backend[] {Backend.CUSTOM, Backend.VENDOR}) {
                    String at = "d" + d + " page " + page + " " + backend;
                    short[] clean = checkCase(at, DType.F16, d, 8, 2, KvLayout.PAGED, page, lens, cap, backend, 90 + d + page);
                    short[] junked = checkCase(at + " junk past the lengths", DType.F16, d, 8, 2, KvLayout.PAGED, page, lens, cap, backend,
                            90 + d + page, 0, c -> {
                                Tensor table = c.blockTable();
                                long pages = c.k().dim(0);
                                int maxPages = (int) table.dim(1);
                                int written = 0;
                                for (int i = 0; i < lens.length; i++) {
                                    for (int j = (lens[i] + page - 1) / page; j < maxPages; j++) {
                                        int v = junk[written++ % junk.length];
                                        table.setRawBits((long) i * maxPages + j, v == 0 ? pages : v);
                                    }
                                }
                                // at least a whole row's worth (pages of 64: 0 + 15 + 16 + 7 + 15 = 53 of 16 per row)
                                assertTrue(written >= maxPages, "the case must leave entries past the lengths: " + written);
                            });
                    assertArrayEquals(clean, junked, at + ": entries past the lengths changed the result");
                }
            }
        }
    }

    @Test void blockTableEntriesOutsideThePagesAreClampedNotFollowed() {
        // Entries below a length must be in [0, P) (checked on the CPU path and with the debug check). A malformed
        // table on a GPU without that check must not send a load outside the cache (memcheck over this class would
        // report it; a fault would surface at the synchronize): the kernels clamp the entry into [0, P), so the result
        // equals, bit for bit, that of the table with those entries replaced by 0 (negative) or P - 1 (too large).
        // Every third used entry of every sequence holds -1, MIN_VALUE, MAX_VALUE, P or P + 7; pages of 4 (an entry
        // per row), 16 and 64 (one per tile); D = 64 and 128; both backends (the vendor path's gather clamps too).
        int[] lens = {1000, 17, 0, 513, 1};
        int cap = 1000;
        for (int d : new int[] {64, 128}) {
            for (int page : new int[] {4, 16, 64}) {
                for (Backend backend : new Backend[] {Backend.CUSTOM, Backend.VENDOR}) {
                    String at = "d" + d + " page " + page + " " + backend;
                    Random rnd = new Random(31L * d + page);
                    try (GqaDecodeProblems.HostCase host = GqaDecodeProblems.random(rnd, DType.F16, 16, 2, d, cap, lens)) {
                        KvCache hostCache = GqaDecodeProblems.relayout(host.k(), host.v(), KvLayout.PAGED, page, new Random(rnd.nextLong()));
                        try {
                            int pages = (int) hostCache.k().dim(0);
                            int maxPages = (int) hostCache.blockTable().dim(1);
                            int[] table = hostCache.blockTable().toIntArray();
                            int[] bad = table.clone();
                            int[] clamped = table.clone();
                            int[] junk = {-1, Integer.MIN_VALUE, Integer.MAX_VALUE, pages, pages + 7};
                            int written = 0;
                            for (int i = 0; i < lens.length; i++) {
                                for (int j = i % 3; j < (lens[i] + page - 1) / page; j += 3) {
                                    int v = junk[written++ % junk.length];
                                    bad[i * maxPages + j] = v;
                                    clamped[i * maxPages + j] = v < 0 ? 0 : pages - 1;
                                }
                            }
                            assertTrue(written >= junk.length, at + ": the case must put every kind of bad entry below a length");
                            short[] got = runPaged(host, hostCache, bad, lens, cap, backend, at + " bad entries");
                            short[] want = runPaged(host, hostCache, clamped, lens, cap, backend, at + " clamped entries");
                            assertArrayEquals(want, got, at + ": bad entries must read the page they clamp to");
                        } finally {
                            GqaDecodeProblems.close(hostCache);
                        }
                    }
                }
            }
        }
    }

    /** o's bits of one run of the paged host cache with {@code table} as its block table (no reference check). */
    private static short[] runPaged(GqaDecodeProblems.HostCase host, KvCache hostCache, int[] table, int[] lens, int cap,
                                    Backend backend, String what) {
        int b = lens.length;
        long hq = host.q().dim(1);
        KvCache cache = null;
        try (Tensor tableT = Tensor.ofInts(GPU, table, hostCache.blockTable().shape()); Tensor k = hostCache.k().to(GPU);
             Tensor v = hostCache.v().to(GPU); Stream s = Stream.create(GPU); Tensor q = host.q().to(GPU);
             Tensor lensT = Tensor.ofInts(GPU, lens, b); Tensor out = Poison.poisoned(GPU, host.q().dtype(), host.q().shape());
             Tensor lse = Poison.poisoned(GPU, DType.F32, b, hq)) {
            cache = KvCache.paged(k, v, tableT);
            try (GqaDecodePlan plan = GqaDecode.plan(GqaDecodeProblems.problem(q, cache, cap), GPU, Options.defaults().withBackend(backend), s)) {
                assertEquals(backend, plan.decision().backend(), what);
                plan.run(q, cache, lensT, out, lse, s);
                s.synchronize();
            }
            float[] o = out.toFloatArray();
            for (int i = 0; i < o.length; i++) {
                assertTrue(Float.isFinite(o[i]), what + ": o[" + i + "] = " + o[i] + " (poison left, or NaN)");
            }
            return bits(out);
        }
    }

    /** The bits of a 16-bit output, for bit-for-bit comparisons between runs. */
    private static short[] bits(Tensor out) {
        short[] bits = new short[(int) out.numel()];
        out.toRaw().asShortBuffer().get(bits);
        return bits;
    }

    @Test void aLaunchOfShortSequencesTakesAFittedChunk() {
        // A plan's chunk is ceil(maxLen / splits); a launch whose longest length is at most maxLen / 2^(k+1) takes the
        // plan's fitted chunk k instead (GqaDecodeHeuristics.fittedChunks), chosen on the device (decode_mma.cu).
        // Lengths at and around the levels alone (B = 1: many splits) and in batches with a short and a long longest,
        // D = 128 (4 warps) and D = 64 (8 warps); every layout gives the BHLD bits and every case meets the reference,
        // also with the A/B switch that keeps the plan's chunk.
        int cap = 8192;
        var info = Gpu.device(GPU).info();
        for (int d : new int[] {128, 64}) {
            GqaDecode.Problem shape = GqaDecode.Problem.contiguous(1, 16, 2, d, cap, KvLayout.BHLD, DType.F16);
            dev.gapfill.ops.GqaDecodeHeuristics.Split split = dev.gapfill.ops.GqaDecodeHeuristics.splits(shape, info);
            int[] fit = dev.gapfill.ops.GqaDecodeHeuristics.fittedChunks(shape, split, info);
            assertTrue(split.splits() >= 8 && fit[0] > 0 && fit[3] > 0 && fit[3] < split.chunk(), "B = 1 must split the keys many ways and fit "
                    + "short launches: " + split + " " + Arrays.toString(fit));
            int[] alone = {1, 65, cap / 16, cap / 2, cap / 2 + 1, cap};
            for (int len : alone) {
                String at = "d" + d + " len " + len + " of " + cap + " (" + split + ", fitted " + Arrays.toString(fit) + ")";
                short[] bhld = checkCase(at + " BHLD", DType.F16, d, 8, 2, KvLayout.BHLD, 16, new int[] {len}, cap, Backend.CUSTOM, len + d);
                assertArrayEquals(bhld, checkCase(at + " BLHD", DType.F16, d, 8, 2, KvLayout.BLHD, 16, new int[] {len}, cap,
                        Backend.CUSTOM, len + d), at + ": BLHD differs from BHLD");
                for (int page : new int[] {4, 64}) {
                    assertArrayEquals(bhld, checkCase(at + " page " + page, DType.F16, d, 8, 2, KvLayout.PAGED, page, new int[] {len}, cap,
                            Backend.CUSTOM, len + d), at + " page " + page + ": differs from BHLD");
                }
            }
            checkCase("d" + d + " short batch", DType.BF16, d, 8, 2, KvLayout.PAGED, 16, new int[] {1024, 3000, 65, 0, 1000}, cap,
                    Backend.CUSTOM, d);
            checkCase("d" + d + " one long", DType.BF16, d, 8, 2, KvLayout.PAGED, 16, new int[] {cap, 3000, 65, 0}, cap, Backend.CUSTOM, d + 1);
            int c = cap;
            SystemProperty.with(GqaDecodePlan.DEBUG_PLAN_CHUNK, "true", () -> checkCase("d" + d + " plan's chunk kept", DType.F16, d,
                    8, 2, KvLayout.PAGED, 16, new int[] {65, 1000}, c, Backend.CUSTOM, d + 2));
        }
    }

    @Test void headTilesSeveralKvHeadsAndOnePass() {
        // G = 7 and 12 pad the 16-head tile; G = 20 takes two tiles (the second padded), also on page size 4 (one
        // block-table lookup per row instead of per 16-key tile); B·Hkv = 640 blocks takes the splits == 1 path.
        checkCase("G=7 Hkv=2", DType.F16, 128, 7, 2, KvLayout.PAGED, 64, new int[] {333, 0, 1000, 64}, 1000, Backend.CUSTOM, 7);
        checkCase("G=12 Hkv=2", DType.BF16, 64, 12, 2, KvLayout.BLHD, 16, new int[] {999, 5, 1000}, 1000, Backend.CUSTOM, 12);
        checkCase("G=20 Hkv=2 page 4", DType.F16, 128, 20, 2, KvLayout.PAGED, 4, new int[] {1000, 17, 0, 513}, 1000, Backend.CUSTOM, 20);
        int[] many = new int[40];
        Random r = new Random(40);
        for (int i = 0; i < many.length; i++) {
            many[i] = r.nextInt(130);
        }
        checkCase("B=40 Hkv=16 one pass", DType.F16, 64, 1, 16, KvLayout.BHLD, 16, many, 129, Backend.CUSTOM, 40);
        checkCase("B=40 Hkv=16 vendor", DType.F16, 64, 1, 16, KvLayout.BHLD, 16, many, 129, Backend.VENDOR, 40);
        // lengths past maxLen are clamped to it on the device, as in the reference
        checkCase("clamped", DType.F16, 128, 4, 1, KvLayout.BHLD, 16, new int[] {5000, 300}, 300, Backend.CUSTOM, 41);
        checkCase("clamped vendor", DType.F16, 128, 4, 1, KvLayout.PAGED, 16, new int[] {5000, 300}, 300, Backend.VENDOR, 41);
    }

    @Property(tries = 30)
    void randomSmallProblems(@ForAll("problems") GqaDecode.Problem p, @ForAll long seed) {
        Random rnd = new Random(seed);
        int[] lens = new int[p.batch()];
        for (int i = 0; i < lens.length; i++) {
            lens[i] = rnd.nextInt(p.maxLen() + 1);
        }
        for (Backend backend : new Backend[] {Backend.CUSTOM, Backend.VENDOR, Backend.AUTO}) {
            checkCase(p + " " + Arrays.toString(lens), p.dtype(), p.headDim(), p.groupSize(), p.kvHeads(), p.layout(),
                    p.layout() == KvLayout.PAGED ? p.pageSize() : 16, lens, p.maxLen(), backend, seed);
        }
    }

    @Provide Arbitrary<GqaDecode.Problem> problems() { return GqaDecodeProblems.smallProblems(); }

    @Test void customRefusesUnsupportedHeadDims() {
        GqaDecode.Problem p = GqaDecode.Problem.contiguous(1, 8, 2, 96, 64, KvLayout.BHLD, DType.F16);
        assertThrows(UnsupportedShapeException.class, () -> GqaDecode.plan(p, GPU, Options.defaults().withBackend(Backend.CUSTOM), null));
        checkCase("D=96 vendor", DType.F16, 96, 4, 2, KvLayout.BHLD, 16, new int[] {64, 3}, 64, Backend.AUTO, 96);
    }

    /**
     * Captures plan.run once in a CUDA graph and replays it 100 times; before each replay new lengths are copied into
     * the device tensor the graph reads and the output is poisoned; every output and lse is checked.
     */
    @Test void capturedStepReplaysWithChangingLengths() {
        capturedStepReplays(Backend.CUSTOM);
    }

    /**
     * The vendor composition's plan, captured and replayed the same way (cuBLAS's GEMMs, the glue kernels and the paged
     * gather in one graph): the class javadoc of GqaDecode says every plan is capturable, and the demo's decode step
     * captures the vendor plan too (since the forty-ninth session), so that both compositions are timed as graphs.
     */
    @Test void capturedVendorStepReplaysWithChangingLengths() {
        capturedStepReplays(Backend.VENDOR);
    }

    /**
     * A plan made while its stream is being captured is refused, naming the stream, and the capture stays valid (since the
     * fiftieth session: its workspace allocation and counter zeroing became nodes of the caller's graph while the plan
     * outlived the capture, so that graph could not be launched twice). The one-shot decode under capture still runs.
     */
    @Test void aPlanIsRefusedOnACapturingStreamAndTheCaptureStaysValid() {
        var cuda = Gpu.device(GPU);
        CUgraph_st graph = new CUgraph_st();
        try (Stream s = Stream.create(GPU)) {
            GqaDecode.Problem p = GqaDecode.Problem.contiguous(2, 8, 2, 128, 256, KvLayout.BHLD, DType.F16);
            cuda.check(cudart.cudaStreamBeginCapture(s.handle(), cudart.cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
            ArgumentException e;
            try {
                e = assertThrows(ArgumentException.class, () -> GqaDecode.plan(p, GPU, Options.defaults(), s));
            } finally {
                cuda.check(cudart.cudaStreamEndCapture(s.handle(), graph), "cudaStreamEndCapture (the capture stayed valid)");
            }
            assertEquals("stream", e.argument(), e.toString());
            try (GqaDecodePlan after = GqaDecode.plan(p, GPU, Options.defaults(), s)) {  // the same call outside the capture
                assertEquals(p, after.problem());
            }
        } finally {
            if (!graph.isNull()) {
                cudart.cudaGraphDestroy(graph);
            }
        }
    }

    private static void capturedStepReplays(Backend backend) {
        int b = 4;
        int g = 4;
        int hkv = 2;
        int d = 128;
        int cap = 700;
        Random rnd = new Random(77);
        try (GqaDecodeProblems.HostCase host = GqaDecodeProblems.random(rnd, DType.F16, hkv * g, hkv, d, cap, new int[b])) {
            KvCache hostCache = GqaDecodeProblems.relayout(host.k(), host.v(), KvLayout.PAGED, 16, rnd);
            KvCache cache = GqaDecodeProblems.to(hostCache, GPU);
            GqaDecodeProblems.close(hostCache);
            CUgraph_st graph = new CUgraph_st();
            CUgraphExec_st exec = new CUgraphExec_st();
            try (Stream s = Stream.create(GPU); Tensor q = host.q().to(GPU); Tensor lens = Tensor.ofInts(GPU, new int[] {cap, 1, 0, 17}, b);
                 Tensor out = Poison.poisoned(GPU, DType.F16, b, hkv * g, d); Tensor lse = Poison.poisoned(GPU, DType.F32, b, hkv * g);
                 GqaDecodePlan plan = GqaDecode.plan(GqaDecodeProblems.problem(q, cache, cap), GPU,
                         Options.defaults().withBackend(backend), s)) {
                assertEquals(backend, plan.decision().backend(), plan.toString());
                assertTrue(backend != Backend.CUSTOM || plan.splits() > 1, "the graph must hold the split and merge kernels: " + plan);
                plan.run(q, cache, lens, out, lse, s);  // warm-up outside the capture
                s.synchronize();
                var cuda = Gpu.device(GPU);
                cuda.check(cudart.cudaStreamBeginCapture(s.handle(), cudart.cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
                plan.run(q, cache, lens, out, lse, s);
                cuda.check(cudart.cudaStreamEndCapture(s.handle(), graph), "cudaStreamEndCapture");
                cuda.check(cudart.cudaGraphInstantiate(exec, graph, 0L), "cudaGraphInstantiate");
                for (int it = 0; it < 100; it++) {
                    int[] l = new int[b];
                    for (int i = 0; i < b; i++) {
                        l[i] = it % 10 == 0 && i % 2 == 0 ? 0 : rnd.nextInt(cap + 1);
                    }
                    lens.copyFrom(l);  // synchronous copy: in place before the next launch
                    out.fillBytes(0xff, s);
                    lse.fillBytes(0xff, s);
                    cuda.check(cudart.cudaGraphLaunch(exec, s.handle()), "cudaGraphLaunch");
                    s.synchronize();
                    GqaDecodeReference.Exact ex = GqaDecodeReference.exact(host.q(), KvCache.bhld(host.k(), host.v()), l, cap, 1 / Math.sqrt(d));
                    Verdict vo = Verifier.compare(out, ex.out(), ex.absTerms(), AttentionTolerance.output(DType.F16, ex, d,
                            AttentionTolerance.roundsProbabilities(backend)), "reference");
                    assertTrue(vo.pass(), backend + " replay " + it + " lens " + Arrays.toString(l) + ": " + vo);
                    Verdict vl = AttentionTolerance.compareLse(lse, ex, d);
                    assertTrue(vl.pass(), "replay " + it + " lens " + Arrays.toString(l) + ": " + vl);
                }
            } finally {
                cudart.cudaGraphExecDestroy(exec);
                cudart.cudaGraphDestroy(graph);
                GqaDecodeProblems.close(cache);
            }
        }
    }

    /**
     * A plan made on a stream that is still busy runs at once on another stream: the run must wait for the plan's
     * setup, the allocation of its partials and the zeroing of its split counters. The pool is trimmed first, so the
     * only free memory it can hand the plan is a region just freed with 0xff bytes in it: a run that went first would
     * find counters of -1, never merge, and leave the poisoned output. Then the same with the run captured (global capture mode) on a third stream: the
     * plan waits on the host in relaxed mode, the capture stays valid, and the replay is checked.
     */
    @Test void aPlanMadeOnABusyStreamRunsOnAnother() {
        SystemProperty.with(GqaDecodePlan.DEBUG_NO_CLUSTER, "true", () -> {  // the global merge: counters in the workspace
            int b = 4;
            int g = 4;
            int hkv = 2;
            int d = 128;
            int cap = 700;
            int[] l = {cap, 333, 1, 650};
            Random rnd = new Random(91);
            try (GqaDecodeProblems.HostCase host = GqaDecodeProblems.random(rnd, DType.F16, hkv * g, hkv, d, cap, l)) {
                KvCache hostCache = GqaDecodeProblems.relayout(host.k(), host.v(), KvLayout.PAGED, 16, rnd);
                KvCache cache = GqaDecodeProblems.to(hostCache, GPU);
                GqaDecodeProblems.close(hostCache);
                GqaDecodeReference.Exact ex = GqaDecodeReference.exact(host.q(), KvCache.bhld(host.k(), host.v()), l, cap, 1 / Math.sqrt(d));
                var cuda = Gpu.device(GPU);
                CUgraph_st graph = new CUgraph_st();
                CUgraphExec_st exec = new CUgraphExec_st();
                try (Stream made = Stream.create(GPU); Stream other = Stream.create(GPU); Stream captured = Stream.create(GPU);
                     Tensor big = Tensor.empty(GPU, DType.I8, made, 512L << 20); Tensor sink = Tensor.empty(GPU, DType.I32, made, 1);
                     Tensor q = host.q().to(GPU); Tensor lens = Tensor.ofInts(GPU, l, b);
                     Tensor out = Poison.poisoned(GPU, DType.F16, b, hkv * g, d); Tensor lse = Poison.poisoned(GPU, DType.F32, b, hkv * g)) {
                    big.fillBytes(0x5a, made);
                    Stream.perThread(GPU).synchronize();
                    made.synchronize();
                    GqaDecode.Problem problem = GqaDecodeProblems.problem(q, cache, cap);
                    String[] labels = {"run on another stream", "run captured on a third stream"};
                    for (int round = 0; round < 2; round++) {
                        cuda.trim();  // the pool keeps no free memory but the poisoned region below (the last plan's zeroed counters are gone)
                        try (Tensor poison = Tensor.empty(GPU, DType.I8, made, 16L << 20)) {
                            poison.fillBytes(0xff, made);  // freed on made below: the plan's allocations reuse it there
                        }
                        Busy.reads(made, big, sink, 20);  // ~3 ms: the plan's zeroing below waits behind it
                        try (GqaDecodePlan plan = GqaDecode.plan(problem, GPU, Options.defaults().withBackend(Backend.CUSTOM), made)) {
                            assertTrue(plan.splits() > 1 && plan.cluster() == 0, "the plan must hold split counters: " + plan);
                            Stream runOn = round == 0 ? other : captured;
                            if (round == 0) {
                                plan.run(q, cache, lens, out, lse, other);
                            } else {
                                cuda.check(cudart.cudaStreamBeginCapture(captured.handle(), cudart.cudaStreamCaptureModeGlobal),
                                        "cudaStreamBeginCapture");
                                plan.run(q, cache, lens, out, lse, captured);
                                cuda.check(cudart.cudaStreamEndCapture(captured.handle(), graph), "cudaStreamEndCapture");
                                cuda.check(cudart.cudaGraphInstantiate(exec, graph, 0L), "cudaGraphInstantiate");
                                out.fillBytes(0xff, captured);
                                lse.fillBytes(0xff, captured);
                                cuda.check(cudart.cudaGraphLaunch(exec, captured.handle()), "cudaGraphLaunch");
                            }
                            runOn.synchronize();
                            Verdict vo = Verifier.compare(out, ex.out(), ex.absTerms(), AttentionTolerance.output(DType.F16, ex, d,
                                    AttentionTolerance.roundsProbabilities(Backend.CUSTOM)), "reference");
                            assertTrue(vo.pass(), labels[round] + " " + plan + ": " + vo);
                            Verdict vl = AttentionTolerance.compareLse(lse, ex, d);
                            assertTrue(vl.pass(), labels[round] + " " + plan + ": " + vl);
                            made.synchronize();
                        }
                        out.fillBytes(0xff, other);
                        lse.fillBytes(0xff, other);
                        other.synchronize();
                    }
                } finally {
                    cudart.cudaGraphExecDestroy(exec);
                    cudart.cudaGraphDestroy(graph);
                    GqaDecodeProblems.close(cache);
                }
            }
        });
    }
}
