package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.UnsupportedShapeException;
import dev.gapfill.ops.GqaDecode.KvLayout;
import dev.gapfill.ops.GqaDecode.Problem;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** GqaDecodeHeuristics on the CPU: the worked examples of its javadoc and the invariants of every split. */
class GqaDecodeHeuristicsTest {
    private static final DeviceInfo H100 = DeviceInfo.h100ForTests();
    private static final DeviceInfo A100 = DeviceInfo.a100ForTests();

    private static Problem bhld(int b, int hq, int hkv, int d, int len) {
        return Problem.contiguous(b, hq, hkv, d, len, KvLayout.BHLD, DType.F16);
    }

    @Test void headTilesCoverTheGroup() {
        assertEquals(1, GqaDecodeHeuristics.headTiles(1));
        assertEquals(1, GqaDecodeHeuristics.headTiles(8));
        assertEquals(1, GqaDecodeHeuristics.headTiles(16));
        assertEquals(2, GqaDecodeHeuristics.headTiles(17));
        assertEquals(2, GqaDecodeHeuristics.headTiles(32));
    }

    @Test void sharedMemoryMatchesTheKernel() {
        // decode_mma.cu Cfg::SMEM: q tile [16, D] + 4 warps × stages × (K + V) 16-key tiles, 2 bytes per element
        assertEquals(67_584, GqaDecodeHeuristics.sharedBytes(64));
        assertEquals(102_400, GqaDecodeHeuristics.sharedBytes(128));
        assertEquals(139_264, GqaDecodeHeuristics.sharedBytes(256));
        // the D = 64 wide kernel: 8 warps × 4 stages (decode_mma.cu Cfg<64, 4, 8>::SMEM), one block per SM
        assertEquals(133_120, GqaDecodeHeuristics.sharedBytes(64, GqaDecodeHeuristics.WIDE_WARPS));
    }

    @Test void workedSplitExamples() {
        // harness split sweep (H100, f16 BHLD): each expectation is the fastest measured split count of its row
        // B=1 32/8 L=8192: s16 = 20.2 us (s12 20.4, s32 21.6)
        assertEquals(new GqaDecodeHeuristics.Split(16, 512), GqaDecodeHeuristics.splits(bhld(1, 32, 8, 128, 8192), H100));
        // B=1 32/8 L=32768: s16 = 52.9 us (s32 54.8)
        assertEquals(new GqaDecodeHeuristics.Split(16, 2048), GqaDecodeHeuristics.splits(bhld(1, 32, 8, 128, 32768), H100));
        // B=4 32/8 L=4096: s4 = 30.1 us (s8 30.7, s3 31.2)
        assertEquals(new GqaDecodeHeuristics.Split(4, 1024), GqaDecodeHeuristics.splits(bhld(4, 32, 8, 128, 4096), H100));
        // B=8 32/8 L=4096: s2 = 51.5 us (s4 52.9)
        assertEquals(new GqaDecodeHeuristics.Split(2, 2048), GqaDecodeHeuristics.splits(bhld(8, 32, 8, 128, 4096), H100));
        // B=16 32/8 L=8192: s1 = 178.6 us (s2 183.1); B=64 L=2048: s1 = 181.0 (s2 188.5)
        assertEquals(1, GqaDecodeHeuristics.splits(bhld(16, 32, 8, 128, 8192), H100).splits());
        assertEquals(1, GqaDecodeHeuristics.splits(bhld(64, 32, 8, 128, 2048), H100).splits());
        // 16/2 d64 B=4 L=8192: s16 = 15.2 us (s12 16.2, s32 16.4) with 4 warps; chunks of 512 keys are above
        // WIDE_HALVE_MAX_CHUNK, so 8-warp blocks at the same count (fixed-cost harness at a795d45: 16.06 us against
        // 16.67 for 4 warps with the same acq_rel ticket, S2)
        assertEquals(new GqaDecodeHeuristics.Split(16, 512), GqaDecodeHeuristics.narrowSplits(bhld(4, 16, 2, 64, 8192), H100));
        assertEquals(new GqaDecodeHeuristics.Split(16, 512, 8), GqaDecodeHeuristics.splits(bhld(4, 16, 2, 64, 8192), H100));
        // fewer SMs on the A100: B=1 32/8 L=8192 takes 13 splits of 640 keys (104 blocks on 108 SMs)
        assertEquals(new GqaDecodeHeuristics.Split(13, 640), GqaDecodeHeuristics.splits(bhld(1, 32, 8, 128, 8192), A100));
    }

    @Property(tries = 300)
    void splitsCoverTheRangeExactly(@ForAll @IntRange(min = 1, max = 64) int b, @ForAll @IntRange(min = 1, max = 32) int hkv,
                                    @ForAll @IntRange(min = 1, max = 40) int g, @ForAll @IntRange(min = 1, max = 200_000) int len) {
        Problem p = bhld(b, hkv * g, hkv, 128, len);
        GqaDecodeHeuristics.Split s = GqaDecodeHeuristics.splits(p, H100);
        assertTrue(s.splits() >= 1 && s.splits() <= GqaDecodeHeuristics.MAX_SPLITS, s.toString());
        assertEquals(0, s.chunk() % GqaDecodeHeuristics.CHUNK_ALIGN, s.toString());
        assertTrue((long) s.splits() * s.chunk() >= len, "splits must cover maxLen: " + s);
        assertTrue((long) (s.splits() - 1) * s.chunk() < len, "no split may start past maxLen: " + s);
    }

    @Test void wideBlocksAtD64HalveOnlySmallChunks() {
        // B=1 16/2 d64 L=2048: 32 splits of 64 keys with 4 warps, 16 of 128 with 8 (harness: 9.06 us against 10.11)
        assertEquals(new GqaDecodeHeuristics.Split(32, 64), GqaDecodeHeuristics.narrowSplits(bhld(1, 16, 2, 64, 2048), H100));
        assertEquals(new GqaDecodeHeuristics.Split(16, 128, 8), GqaDecodeHeuristics.splits(bhld(1, 16, 2, 64, 2048), H100));
        // B=4 L=2048: 16 splits of 128 keys halve to 8 of 256, the largest chunk that halves
        assertEquals(new GqaDecodeHeuristics.Split(16, 128), GqaDecodeHeuristics.narrowSplits(bhld(4, 16, 2, 64, 2048), H100));
        assertEquals(new GqaDecodeHeuristics.Split(8, 256, 8), GqaDecodeHeuristics.splits(bhld(4, 16, 2, 64, 2048), H100));
        // two splits of 256 halve to one 8-warp block: no ticket at all (harness W8@1 at B=16 L=512 d64: 9.02 us against
        // 10.82 for 4 warps at 4 splits)
        assertEquals(new GqaDecodeHeuristics.Split(2, 256), GqaDecodeHeuristics.narrowSplits(bhld(33, 16, 2, 64, 512), H100));
        assertEquals(new GqaDecodeHeuristics.Split(1, 512, 8), GqaDecodeHeuristics.splits(bhld(33, 16, 2, 64, 512), H100));
        // chunks above WIDE_HALVE_MAX_CHUNK keep the count: B=16 L=8192, 4 splits of 2048 (halved, lengths in [L/2, L]
        // took 1.09-1.12x the 4-warp time in the sweep at e240d80); B=1 L=131072, 64 of 2048 (8-warp plans are not
        // merge-capped: 32 of 4096 lost with lengths in [L/2, L], the sweep at 314e836)
        assertEquals(new GqaDecodeHeuristics.Split(4, 2048), GqaDecodeHeuristics.narrowSplits(bhld(16, 16, 2, 64, 8192), H100));
        assertEquals(new GqaDecodeHeuristics.Split(4, 2048, 8), GqaDecodeHeuristics.splits(bhld(16, 16, 2, 64, 8192), H100));
        assertEquals(new GqaDecodeHeuristics.Split(64, 2048, 8), GqaDecodeHeuristics.splits(bhld(1, 16, 2, 64, 131072), H100));
        // the edges: 320 keys, just above WIDE_HALVE_MAX_CHUNK, keep the count; 4032 keys (<= WIDE_MAX_CHUNK) stay wide
        assertEquals(new GqaDecodeHeuristics.Split(63, 320, 8), GqaDecodeHeuristics.splits(bhld(1, 16, 2, 64, 20000), H100));
        assertEquals(new GqaDecodeHeuristics.Split(33, 4032, 8), GqaDecodeHeuristics.splits(bhld(2, 16, 2, 64, 131072), H100));
        // chunks above WIDE_MAX_CHUNK keep 4 warps: B=4 L=131072 and B=16 L=32768, 8192 keys (8 warps at the same count
        // took 1.00-1.05x the 4-warp time in the sweep at ba6fb7a); 6016 keys too
        assertEquals(new GqaDecodeHeuristics.Split(16, 8192), GqaDecodeHeuristics.splits(bhld(4, 16, 2, 64, 131072), H100));
        assertEquals(new GqaDecodeHeuristics.Split(4, 8192), GqaDecodeHeuristics.splits(bhld(16, 16, 2, 64, 32768), H100));
        assertEquals(new GqaDecodeHeuristics.Split(22, 6016), GqaDecodeHeuristics.splits(bhld(3, 16, 2, 64, 131072), H100));
        // a 4-warp plan of one split stays a 4-warp block (whole waves of blocks, nothing to halve; not measured with 8)
        assertEquals(new GqaDecodeHeuristics.Split(1, 8192), GqaDecodeHeuristics.splits(bhld(132, 16, 1, 64, 8192), H100));
        // D = 128 and 256 keep 4 warps
        assertEquals(4, GqaDecodeHeuristics.splits(bhld(1, 32, 8, 128, 8192), H100).warps());
        assertEquals(4, GqaDecodeHeuristics.splits(bhld(1, 64, 8, 256, 8192), H100).warps());
        // a device whose opt-in shared memory is below the wide block's 133 120 B keeps 4 warps
        DeviceInfo small = new DeviceInfo(0, "an sm_86 GPU", 8, 6, 84, 6L << 20, 99L << 10, 100L << 10, 48L << 30, 13000, 13000, 130100, 91400);
        assertEquals(4, GqaDecodeHeuristics.splits(bhld(1, 16, 2, 64, 2048), small).warps());
        // so does a device whose opt-in limit is unknown (0)
        DeviceInfo unknown = new DeviceInfo(0, "unknown", 9, 0, 132, 50L << 20, 0L, 228L << 10, 80L << 30, 13000, 13000, 130100, 91400);
        assertEquals(0, unknown.smemPerBlockOptin());
        assertEquals(4, GqaDecodeHeuristics.splits(bhld(1, 16, 2, 64, 2048), unknown).warps());
        // the variant names the wide kernel (B=4 L=8192: chunks of 512 keys, too long for the cluster kernels)
        assertEquals("decode_mma_w8_d64_h16x1_s16", GqaDecodeHeuristics.decide(bhld(4, 16, 2, 64, 8192), H100, Backend.AUTO).variant());
    }

    @Test void oneSplitWhereTheUnitsFillNearlyHalfTheSmsAndTheKeysAreFew() {
        // GqaDecodeSplitProbe (thirty-fifth session): 64 units on 132 SMs, one split against the model's two
        assertEquals(new GqaDecodeHeuristics.Split(1, 512), GqaDecodeHeuristics.splits(bhld(16, 28, 4, 128, 512), H100));   // 12.3 vs 14.7
        assertEquals(new GqaDecodeHeuristics.Split(1, 512), GqaDecodeHeuristics.splits(bhld(8, 32, 8, 128, 512), H100));    // 12.0 vs 13.2
        assertEquals(2, GqaDecodeHeuristics.narrowSplits(bhld(16, 28, 4, 128, 512), H100).splits());
        // 8-warp blocks at D = 64 (at 64 units and L = 512 the halved 8-warp plan is one split already)
        assertEquals(new GqaDecodeHeuristics.Split(1, 512, 8), GqaDecodeHeuristics.splits(bhld(32, 16, 2, 64, 512), H100));
        // the bounds: maxLen 2048 (the a46983e sweep lost 8-12 % with lengths in [L/2, L]), 48 units (two splits won)
        assertEquals(new GqaDecodeHeuristics.Split(2, 1024), GqaDecodeHeuristics.splits(bhld(16, 28, 4, 128, 2048), H100));
        assertEquals(2, GqaDecodeHeuristics.splits(bhld(8, 32, 8, 128, 2048), H100).splits());
        assertEquals(new GqaDecodeHeuristics.Split(2, 1024, 8), GqaDecodeHeuristics.splits(bhld(32, 16, 2, 64, 2048), H100));
        assertEquals(2, GqaDecodeHeuristics.splits(bhld(12, 28, 4, 128, 512), H100).splits());
        // 0.45 of the SMs: 60 units on 132 SMs take one split, 59 do not (G = 4: one head tile per KV head)
        assertEquals(2, GqaDecodeHeuristics.narrowSplits(bhld(59, 4, 1, 128, 512), H100).splits());
        assertEquals(2, GqaDecodeHeuristics.splits(bhld(59, 4, 1, 128, 512), H100).splits());
        assertEquals(1, GqaDecodeHeuristics.splits(bhld(60, 4, 1, 128, 512), H100).splits());
        assertEquals(2, GqaDecodeHeuristics.splits(bhld(60, 4, 1, 128, 576), H100).splits());
        // no fitted chunks for a one-split plan, and no cluster (withCluster needs 2 splits)
        GqaDecodeHeuristics.Split one = GqaDecodeHeuristics.splits(bhld(16, 28, 4, 128, 512), H100);
        assertEquals(0, java.util.Arrays.stream(GqaDecodeHeuristics.fittedChunks(bhld(16, 28, 4, 128, 512), one, H100)).sum());
        assertEquals(one, GqaDecodeHeuristics.withCluster(bhld(16, 28, 4, 128, 512), one, H100));
    }

    @Test void clusterMergeWhereFewBlocksHoldShortChunks() {
        // cluster/h100-76c01f6-cluster-ab.txt: each changed plan ran faster as the cluster launch named here
        // 32/8 B=1 L=512: the plan's 8 splits of 64 keys, 64 blocks: one cluster of 8 per KV head (8.77 against 9.12 µs)
        assertEquals(new GqaDecodeHeuristics.Split(8, 64, 4, 8), cluster(bhld(1, 32, 8, 128, 512)));
        assertEquals("decode_mma_c8_d128_h16x1_s8", GqaDecodeHeuristics.decide(bhld(1, 32, 8, 128, 512), H100, Backend.AUTO).variant());
        // 28/4 B=1 L=2048: the plan's 16 splits become a cluster of 8 (10.75 against 12.06 µs)
        assertEquals(new GqaDecodeHeuristics.Split(8, 256, 4, 8), cluster(bhld(1, 28, 4, 128, 2048)));
        // 32/8 B=4 L=512: 4 splits would be 128 blocks, more than half the SMs; clusters of 2 (64 blocks) instead
        assertEquals(new GqaDecodeHeuristics.Split(2, 256, 4, 2), cluster(bhld(4, 32, 8, 128, 512)));
        // 16/2 d64 B=1 L=512: the 8-warp plan of 4 splits becomes 4 blocks of 4 warps in a cluster (7.62 against 8.80 µs)
        assertEquals(new GqaDecodeHeuristics.Split(4, 128, 4, 4), cluster(bhld(1, 16, 2, 64, 512)));
        assertEquals("c4_", cluster(bhld(1, 16, 2, 64, 512)).kernelInfix());
        // unchanged: one split; chunks above 512 keys; compute capability other than 9.0
        assertEquals(GqaDecodeHeuristics.splits(bhld(16, 32, 8, 128, 512), H100), cluster(bhld(16, 32, 8, 128, 512)));
        assertEquals(new GqaDecodeHeuristics.Split(16, 512), cluster(bhld(1, 32, 8, 128, 8192)));
        assertEquals(new GqaDecodeHeuristics.Split(4, 2048), cluster(bhld(4, 32, 8, 128, 8192)));
        Problem small = bhld(1, 32, 8, 128, 512);
        assertEquals(GqaDecodeHeuristics.splits(small, A100), GqaDecodeHeuristics.withCluster(small, GqaDecodeHeuristics.splits(small, A100), A100));
        assertTrue(GqaDecodeHeuristics.decide(small, A100, Backend.AUTO).variant().startsWith("decode_mma_d128_"));
    }

    @Test void clusterPlansNeedEveryClusterResidentAtOnce() {
        assertTrue(GqaDecodeHeuristics.clustersFit(8, 30));
        assertTrue(GqaDecodeHeuristics.clustersFit(30, 30));
        assertFalse(GqaDecodeHeuristics.clustersFit(31, 30), "a second wave of clusters: the global merge instead");
        assertFalse(GqaDecodeHeuristics.clustersFit(1, 0), "not one cluster fits the device");
    }

    private static GqaDecodeHeuristics.Split cluster(Problem p) {
        return GqaDecodeHeuristics.withCluster(p, GqaDecodeHeuristics.splits(p, H100), H100);
    }

    @Property(tries = 300)
    void clusterPlansFitTheirKernels(@ForAll @IntRange(min = 1, max = 64) int b, @ForAll @IntRange(min = 1, max = 32) int hkv,
                                     @ForAll @IntRange(min = 1, max = 40) int g, @ForAll @IntRange(min = 1, max = 20_000) int len,
                                     @ForAll @IntRange(min = 0, max = 2) int di) {
        Problem p = bhld(b, hkv * g, hkv, 64 << di, len);
        GqaDecodeHeuristics.Split plan = GqaDecodeHeuristics.splits(p, H100);
        GqaDecodeHeuristics.Split s = GqaDecodeHeuristics.withCluster(p, plan, H100);
        if (s.equals(plan)) {
            return;
        }
        // a cluster kernel exists for the size (c2, c4, c8), the grid's splits are one cluster, and the blocks are few
        assertTrue(s.cluster() == 2 || s.cluster() == 4 || s.cluster() == 8, s.toString());
        assertEquals(s.cluster(), s.splits(), s.toString());
        assertEquals(4, s.warps(), s.toString());
        assertTrue(plan.splits() >= s.splits(), s + " from " + plan);
        assertTrue((long) b * hkv * GqaDecodeHeuristics.headTiles(g) * s.splits() <= H100.smCount() / 2, s.toString());
        assertTrue(s.chunk() <= GqaDecodeHeuristics.CLUSTER_MAX_CHUNK && s.chunk() % GqaDecodeHeuristics.CHUNK_ALIGN == 0, s.toString());
        assertEquals(s.splits(), (len + s.chunk() - 1) / s.chunk(), "exactly one cluster of splits covers maxLen: " + s);
    }

    @Property(tries = 300)
    void wideSplitsCoverTheRangeExactly(@ForAll @IntRange(min = 1, max = 64) int b, @ForAll @IntRange(min = 1, max = 32) int hkv,
                                        @ForAll @IntRange(min = 1, max = 40) int g, @ForAll @IntRange(min = 1, max = 200_000) int len) {
        Problem p = bhld(b, hkv * g, hkv, 64, len);
        GqaDecodeHeuristics.Split s = GqaDecodeHeuristics.splits(p, H100);
        GqaDecodeHeuristics.Split narrow = GqaDecodeHeuristics.narrowSplits(p, H100);
        GqaDecodeHeuristics.Split one = GqaDecodeHeuristics.oneSplit(p, H100);
        if (one != null) {  // one split of 8-warp blocks (oneSplit's rule), where the model splits
            assertEquals(one, s);
            assertTrue(narrow.splits() >= 2 && len <= GqaDecodeHeuristics.ONE_SPLIT_MAX_LEN, s + " from " + narrow);
            assertEquals(new GqaDecodeHeuristics.Split(1, (len + 63) / 64 * 64, GqaDecodeHeuristics.WIDE_WARPS), s);
            return;
        }
        boolean wide = narrow.splits() >= 2 && narrow.chunk() <= GqaDecodeHeuristics.WIDE_MAX_CHUNK;
        assertEquals(wide ? GqaDecodeHeuristics.WIDE_WARPS : 4, s.warps(), s + " from " + narrow);
        if (!wide) {
            assertEquals(GqaDecodeHeuristics.mergeCapped(p, narrow, len), s);
            return;
        }
        assertTrue(s.splits() >= 1 && s.splits() <= narrow.splits(), s + " from " + narrow);
        if (narrow.chunk() > GqaDecodeHeuristics.WIDE_HALVE_MAX_CHUNK) {
            assertEquals(narrow.splits(), s.splits(), s + " from " + narrow);
        } else if (narrow.splits() >= 2) {
            assertTrue(s.splits() <= (narrow.splits() + 1) / 2, "halved: " + s + " from " + narrow);
        }
        assertEquals(0, s.chunk() % GqaDecodeHeuristics.CHUNK_ALIGN, s.toString());
        assertTrue((long) s.splits() * s.chunk() >= len, "splits must cover maxLen: " + s);
        assertTrue((long) (s.splits() - 1) * s.chunk() < len, "no split may start past maxLen: " + s);
    }

    @Property(tries = 100)
    void wholeWavesAreNotSplit(@ForAll @IntRange(min = 1, max = 4) int waves, @ForAll @IntRange(min = 1, max = 200_000) int len) {
        // B·Hkv = 132·waves blocks already give every SM the same number of blocks: splitting only adds overhead
        Problem p = bhld(33 * waves, 16, 4, 128, len);
        assertEquals(1, GqaDecodeHeuristics.splits(p, H100).splits());
    }

    @Test void autoTakesTheCustomKernelWhereverItRuns() {
        // harness: custom faster than the cuBLAS composition on all 288 rows, 1.07x (32/32 B=64 L=2048) to 14x
        assertEquals(Backend.CUSTOM, GqaDecodeHeuristics.decide(bhld(1, 32, 8, 128, 8192), H100, Backend.AUTO).backend());
        assertEquals(Backend.CUSTOM, GqaDecodeHeuristics.decide(bhld(64, 32, 8, 128, 4096), H100, Backend.AUTO).backend());
        assertEquals(Backend.CUSTOM, GqaDecodeHeuristics.decide(bhld(64, 32, 32, 128, 2048), H100, Backend.AUTO).backend());
        assertEquals(Backend.CUSTOM, GqaDecodeHeuristics.decide(bhld(1, 32, 8, 128, 512), H100, Backend.AUTO).backend());
        assertEquals(Backend.CUSTOM, GqaDecodeHeuristics.decide(paged(64, 16, 2, 64, 16, 32), H100, Backend.AUTO).backend());
        assertEquals(Backend.CUSTOM, GqaDecodeHeuristics.decide(paged(1, 64, 8, 128, 16, 512), H100, Backend.AUTO).backend());
    }

    @Test void sharedMemoryLimitTakesTwoStagesAtD128AndSendsD256ToTheVendorPath() {
        // a GPU with 99 KiB of opt-in shared memory per block (sm_86/sm_89 class): the 3-stage D=128 block needs 100 KiB,
        // the 2-stage one 68 KiB; D=256 (136 KiB) does not fit; D=64 fits
        DeviceInfo small = new DeviceInfo(0, "small", 8, 6, 84, 6L << 20, 99L << 10, 100L << 10, 24L << 30,
                13000, 13000, 130100, 91400);
        assertEquals(102_400, GqaDecodeHeuristics.sharedBytes(128, 4, 3));
        assertEquals(69_632, GqaDecodeHeuristics.sharedBytes(128, 4, GqaDecodeHeuristics.TWO_STAGES));
        assertEquals(GqaDecodeHeuristics.TWO_STAGES, GqaDecodeHeuristics.stages(128, small));
        Decision d128 = GqaDecodeHeuristics.decide(bhld(1, 32, 8, 128, 8192), small, Backend.AUTO);
        assertEquals(Backend.CUSTOM, d128.backend());
        assertTrue(d128.variant().startsWith("decode_mma_s2_d128_"), d128.variant());
        assertEquals(d128.variant(), GqaDecodeHeuristics.decide(bhld(1, 32, 8, 128, 8192), small, Backend.CUSTOM).variant());
        assertEquals(Backend.VENDOR, GqaDecodeHeuristics.decide(bhld(1, 32, 8, 256, 8192), small, Backend.AUTO).backend());
        assertThrows(UnsupportedShapeException.class, () -> GqaDecodeHeuristics.decide(bhld(1, 32, 8, 256, 8192), small, Backend.CUSTOM));
        assertEquals(Backend.CUSTOM, GqaDecodeHeuristics.decide(bhld(1, 16, 2, 64, 8192), small, Backend.AUTO).backend());
        // the A100 and the H100 keep 3 stages at D=128 (no s2_ in the variant)
        for (DeviceInfo big : new DeviceInfo[] {A100, H100}) {
            assertEquals(3, GqaDecodeHeuristics.stages(128, big));
            assertFalse(GqaDecodeHeuristics.decide(bhld(1, 32, 8, 128, 8192), big, Backend.AUTO).variant().contains("s2_"));
        }
        // the A100 (163 KiB) runs every head dim
        assertEquals(Backend.CUSTOM, GqaDecodeHeuristics.decide(bhld(1, 8, 2, 256, 8192), A100, Backend.AUTO).backend());
    }

    private static Problem paged(int b, int hq, int hkv, int d, int ps, int pages) {
        return Problem.paged(b, hq, hkv, d, ps, pages, DType.BF16);
    }

    @Test void forcedBackendsAndUnsupportedShapes() {
        Problem d96 = bhld(1, 8, 2, 96, 100);
        UnsupportedShapeException e = assertThrows(UnsupportedShapeException.class,
                () -> GqaDecodeHeuristics.decide(d96, H100, Backend.CUSTOM));
        assertEquals("backend", e.argument());
        assertTrue(e.getMessage().contains("headDim"), e.getMessage());
        assertEquals(Backend.VENDOR, GqaDecodeHeuristics.decide(d96, H100, Backend.AUTO).backend());
        assertEquals(Backend.CUSTOM, GqaDecodeHeuristics.decide(bhld(4, 32, 8, 128, 8192), H100, Backend.CUSTOM).backend());
        assertEquals(Backend.VENDOR, GqaDecodeHeuristics.decide(bhld(1, 32, 8, 128, 8192), H100, Backend.VENDOR).backend());
        DeviceInfo noCudnn = new DeviceInfo(0, "NVIDIA H100 80GB HBM3", 9, 0, 132, 50L << 20, 227L << 10, 228L << 10, 80L << 30,
                13000, 13000, 130100, -1);
        assertEquals(Backend.CUSTOM, GqaDecodeHeuristics.decide(bhld(4, 32, 8, 128, 8192), noCudnn, Backend.AUTO).backend());
        assertThrows(UnsupportedShapeException.class, () -> GqaDecodeHeuristics.decide(bhld(4, 32, 8, 128, 8192), noCudnn, Backend.VENDOR));
        assertThrows(UnsupportedShapeException.class, () -> GqaDecodeHeuristics.decide(d96, noCudnn, Backend.AUTO));
    }

    @Test void decisionNamesTheVariant() {
        Decision d = GqaDecodeHeuristics.decide(bhld(1, 28, 4, 128, 131072), H100, Backend.AUTO);
        assertEquals(Backend.CUSTOM, d.backend());
        assertTrue(d.variant().startsWith("decode_mma_d128_h16x1_s"), d.variant());
        assertTrue(d.reason().contains("harness"), d.reason());
        Problem paged = new Problem(2, 8, 2, 64, 100, KvLayout.PAGED, 16, 7, DType.BF16);
        assertTrue(GqaDecodeHeuristics.decide(paged, H100, Backend.VENDOR).variant().endsWith("+gather"));
    }

    @Test void fittedChunksServeShortLaunchesAsAPlanOfTheirLengthWould() {
        // GqaDecodeLengthProbe on the H100: a step of short sequences under a plan for a long maxLen; entry k serves a
        // longest length of at most maxLen / 2^(k+1)
        GqaDecodeHeuristics.Split wide = GqaDecodeHeuristics.splits(bhld(1, 16, 2, 64, 32768), H100);
        assertEquals(new GqaDecodeHeuristics.Split(64, 512, GqaDecodeHeuristics.WIDE_WARPS), wide);
        int[] fit = GqaDecodeHeuristics.fittedChunks(bhld(1, 16, 2, 64, 32768), wide, H100);
        assertEquals(512, fit[0], "16384 keys: the plan of 16384 halves to 32 splits of 512, the plan's own chunk");
        assertEquals(128, fit[2], "4096 keys: 32 wide splits of 128, as a plan of 4096 (8 warps) runs them");
        GqaDecodeHeuristics.Split p28 = GqaDecodeHeuristics.splits(bhld(1, 28, 4, 128, 131072), H100);
        assertEquals(new GqaDecodeHeuristics.Split(33, 4032), p28);
        assertEquals(2048, GqaDecodeHeuristics.fittedChunks(bhld(1, 28, 4, 128, 131072), p28, H100)[0], "65536 keys: 32 splits of 2048");
        GqaDecodeHeuristics.Split p32 = GqaDecodeHeuristics.splits(bhld(1, 32, 8, 128, 32768), H100);
        assertEquals(64, GqaDecodeHeuristics.fittedChunks(bhld(1, 32, 8, 128, 32768), p32, H100)[4], "1024 keys: 16 splits of 64");
        // one split: nothing to fit
        GqaDecodeHeuristics.Split one = GqaDecodeHeuristics.splits(bhld(64, 32, 8, 128, 2048), H100);
        assertEquals(1, one.splits());
        for (int c : GqaDecodeHeuristics.fittedChunks(bhld(64, 32, 8, 128, 2048), one, H100)) {
            assertEquals(0, c);
        }
    }

    @Property(tries = 300)
    void fittedChunksStayWithinThePlansSplitsAndChunk(@ForAll @IntRange(min = 1, max = 64) int b, @ForAll @IntRange(min = 0, max = 3) int heads,
                                                      @ForAll @IntRange(min = 1, max = 200_000) int maxLen) {
        int[][] hs = {{32, 8, 128}, {28, 4, 128}, {16, 2, 64}, {64, 64, 256}};
        Problem p = bhld(b, hs[heads][0], hs[heads][1], hs[heads][2], maxLen);
        GqaDecodeHeuristics.Split plan = GqaDecodeHeuristics.splits(p, H100);
        int[] fit = GqaDecodeHeuristics.fittedChunks(p, plan, H100);
        assertEquals(GqaDecodeHeuristics.FIT_LEVELS, fit.length);
        for (int k = 0; k < fit.length; k++) {
            int len = maxLen >> (k + 1);
            if (plan.splits() < 2 || len < GqaDecodeHeuristics.CHUNK_ALIGN) {
                assertEquals(0, fit[k], "level " + k + " of " + plan);
                continue;
            }
            // a multiple of 64 (paged tiles stay in one page), at most the plan's chunk (the workspace holds every split),
            // and the plan's splits of it cover the level's length (no sequence of that length loses keys)
            assertEquals(0, fit[k] % GqaDecodeHeuristics.CHUNK_ALIGN, "level " + k);
            assertTrue(fit[k] > 0 && fit[k] <= plan.chunk(), "level " + k + ": " + fit[k] + " of " + plan);
            assertTrue((long) fit[k] * plan.splits() >= len, "level " + k + ": " + fit[k] + " × " + plan.splits() + " < " + len);
        }
    }

    @Test void forcedSplitsTakeTheCountAndWarpsAsked() {
        assertEquals(new GqaDecodeHeuristics.Split(32, 4096, GqaDecodeHeuristics.WIDE_WARPS),
                GqaDecodeHeuristics.forcedSplit(bhld(1, 16, 2, 64, 131072), 32, 8, H100));
        assertEquals(new GqaDecodeHeuristics.Split(16, 1024), GqaDecodeHeuristics.forcedSplit(bhld(1, 28, 4, 128, 16384), 16, 4, H100));
        // the count the rounded chunk needs: 1000 keys in 3 → chunks of 384, still 3; 7 → 192, 6 splits
        assertEquals(new GqaDecodeHeuristics.Split(6, 192), GqaDecodeHeuristics.forcedSplit(bhld(1, 32, 8, 128, 1000), 7, 4, H100));
        assertEquals(new GqaDecodeHeuristics.Split(16, 64), GqaDecodeHeuristics.forcedSplit(bhld(1, 32, 8, 128, 1000), 500, 4, H100));
        assertThrows(UnsupportedShapeException.class, () -> GqaDecodeHeuristics.forcedSplit(bhld(1, 32, 8, 128, 1000), 4, 8, H100));
        assertThrows(UnsupportedShapeException.class, () -> GqaDecodeHeuristics.forcedSplit(bhld(1, 16, 2, 64, 1000), 4, 6, H100));
    }

    @Test void theMergeCapTakesTheSplitProbesFasterCounts() {
        // GqaDecodeSplitProbe at 3cfba01 (H100, lengths = L): B=1 28/4 d128 16 splits where the model takes 32, up to
        // 1024-key chunks (L=2048 11.6 against 12.8 µs; L=8192 16.1 / 16.9); at L=65536 (4096 keys) the model's 32 stay
        // (54.2 against 55.7 for 16)
        assertEquals(new GqaDecodeHeuristics.Split(16, 128), GqaDecodeHeuristics.splits(bhld(1, 28, 4, 128, 2048), H100));
        assertEquals(new GqaDecodeHeuristics.Split(16, 512), GqaDecodeHeuristics.splits(bhld(1, 28, 4, 128, 8192), H100));
        assertEquals(new GqaDecodeHeuristics.Split(32, 2048), GqaDecodeHeuristics.splits(bhld(1, 28, 4, 128, 65536), H100));
        // 8-warp plans are not capped (B=1 16/2 d64 L=65536: the model's 64 of 1024)
        assertEquals(new GqaDecodeHeuristics.Split(64, 1024, 8), GqaDecodeHeuristics.splits(bhld(1, 16, 2, 64, 65536), H100));
        // the fitted chunk of a short launch under a 4-warp plan is capped too: 28/4 L=32768, longest 16384 takes 16
        // splits of 1024, the plan's own chunk (the length probe's 0.96x row: 32 of 512 were slower)
        GqaDecodeHeuristics.Split p28 = GqaDecodeHeuristics.splits(bhld(1, 28, 4, 128, 32768), H100);
        assertEquals(new GqaDecodeHeuristics.Split(32, 1024), p28, "2048-key chunks at 16 splits: above the cap's chunk limit");
        assertEquals(1024, GqaDecodeHeuristics.fittedChunks(bhld(1, 28, 4, 128, 32768), p28, H100)[0]);
        // at least 64 blocks: one unit (B=1, Hkv=1) keeps 64 splits, two keep 32 (4 warps, d128: 16/2)
        assertEquals(64, GqaDecodeHeuristics.splits(bhld(1, 8, 1, 128, 8192), H100).splits());
        assertEquals(32, GqaDecodeHeuristics.splits(bhld(1, 16, 2, 128, 8192), H100).splits());
        // 32/8 at B=1 (8 units): 16 splits, the model's own count, untouched
        assertEquals(new GqaDecodeHeuristics.Split(16, 512), GqaDecodeHeuristics.splits(bhld(1, 32, 8, 128, 8192), H100));
    }

    @Test void aCacheLongerThanTheCustomLimitIsRefusedBeforeAnyLaunch() {
        // one physical page of 65536 positions can back every column of a 32767-column block table: maxLen 2,147,418,112,
        // where the split plan's 32-bit (maxLen + chunk - 1) wrapped and the kernel wrote through a null workspace
        Problem longest = Problem.paged(1, 32, 8, 128, 65536, 32767, DType.F16);
        assertTrue(GqaDecodeHeuristics.customUnsupported(longest).startsWith("maxLen <= 2^30"));
        UnsupportedShapeException auto = assertThrows(UnsupportedShapeException.class,
                () -> GqaDecodeHeuristics.decide(longest, H100, Backend.AUTO));
        assertTrue(auto.getMessage().contains("maxLen <= 2^30"), auto.getMessage());
        assertThrows(UnsupportedShapeException.class, () -> GqaDecodeHeuristics.decide(longest, H100, Backend.CUSTOM));
        Problem atLimit = Problem.paged(1, 32, 8, 128, 65536, 16384, DType.F16);  // 2^30 positions
        assertEquals(Backend.CUSTOM, GqaDecodeHeuristics.decide(atLimit, H100, Backend.AUTO).backend());
    }

    @Property(tries = 300)
    void splitPlansCoverEveryLengthUpToTheCustomLimitWithout32BitOverflow(
            @ForAll @IntRange(min = 1, max = GqaDecodeHeuristics.CUSTOM_MAX_LEN) int len, @ForAll @IntRange(min = 1, max = 64) int b) {
        for (DeviceInfo info : new DeviceInfo[] {H100, A100}) {
            Problem p = bhld(b, 32, 8, 128, len);
            GqaDecodeHeuristics.Split s = GqaDecodeHeuristics.withCluster(p, GqaDecodeHeuristics.splits(p, info), info);
            assertTrue(s.splits() >= 1 && s.chunk() >= 1, s::toString);
            assertTrue((long) s.splits() * s.chunk() >= len, () -> s + " covers " + len);
            assertTrue((long) len + s.chunk() - 1 <= Integer.MAX_VALUE, () -> s + ": the kernel's (len + chunk - 1) fits 32 bits");
            assertTrue((long) (s.splits() - 1) * s.chunk() < len, () -> s + ": no split starts past " + len);
        }
    }
    @Test void decideNamesTheVendorOnlyWhereItsPlanTakesMaxLen() {
        // the vendor plan's mask and probability passes index maxLen + ceil(maxLen/256)·256 in 32 bits: up to 2^30 − 1
        Problem longest = bhld(1, 1, 1, 128, (1 << 30) - 1);
        assertEquals(Backend.VENDOR, GqaDecodeHeuristics.decide(longest, H100, Backend.VENDOR).backend());
        assertEquals((1 << 22), GqaDecodePlan.glueColumns(longest.maxLen()));  // the plan takes it
        Problem over = bhld(1, 1, 1, 128, 1 << 30);
        assertThrows(ArgumentException.class, () -> GqaDecodePlan.glueColumns(over.maxLen()));  // the plan refuses it
        assertTrue(GqaDecodeHeuristics.vendorUnsupported(over, H100).startsWith("maxLen <= 1073741823"),
                GqaDecodeHeuristics.vendorUnsupported(over, H100));
        assertEquals("backend", assertThrows(UnsupportedShapeException.class,
                () -> GqaDecodeHeuristics.decide(over, H100, Backend.VENDOR)).argument());
        assertEquals(Backend.CUSTOM, GqaDecodeHeuristics.decide(over, H100, Backend.AUTO).backend());  // CUSTOM takes 2^30
    }
}
