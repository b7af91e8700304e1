package dev.gapfill.ops;

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
        assertEquals(1, GqaDecodeHeuristics.headTile(1));
        assertEquals(2, GqaDecodeHeuristics.headTile(2));
        assertEquals(4, GqaDecodeHeuristics.headTile(3));
        assertEquals(8, GqaDecodeHeuristics.headTile(7));
        assertEquals(8, GqaDecodeHeuristics.headTile(12));
        assertEquals(2, GqaDecodeHeuristics.headTiles(12));
        assertEquals(1, GqaDecodeHeuristics.headTiles(8));
        assertEquals(4, GqaDecodeHeuristics.headTiles(32));
    }

    @Test void workedSplitExamples() {
        // B=1, Hkv=8, L=4096: 66 splits wanted, capped at 32 by the 128-key minimum (harness: s32 = 29.9 us, best)
        assertEquals(new GqaDecodeHeuristics.Split(32, 128), GqaDecodeHeuristics.splits(bhld(1, 32, 8, 128, 4096), H100));
        // B=1, Hkv=32, L=8192: 17 wanted -> chunk 512 -> 16 splits (harness: s16 = 67.4 us vs s8 = 94.5)
        assertEquals(new GqaDecodeHeuristics.Split(16, 512), GqaDecodeHeuristics.splits(bhld(1, 32, 32, 128, 8192), H100));
        // B=64, Hkv=8, L=512: 512 blocks -> 2 splits (harness: s2 = 101.7 us vs s1 = 113.0)
        assertEquals(new GqaDecodeHeuristics.Split(2, 256), GqaDecodeHeuristics.splits(bhld(64, 32, 8, 128, 512), H100));
        // plenty of blocks: no split
        assertEquals(1, GqaDecodeHeuristics.splits(bhld(64, 32, 32, 128, 2048), H100).splits());
        // fewer SMs on the A100: fewer splits for the same shape
        assertTrue(GqaDecodeHeuristics.splits(bhld(1, 32, 32, 128, 8192), A100).splits()
                <= GqaDecodeHeuristics.splits(bhld(1, 32, 32, 128, 8192), H100).splits());
    }

    @Property(tries = 300)
    void splitsCoverTheRangeExactly(@ForAll @IntRange(min = 1, max = 64) int b, @ForAll @IntRange(min = 1, max = 32) int hkv,
                                    @ForAll @IntRange(min = 1, max = 16) int g, @ForAll @IntRange(min = 1, max = 200_000) int len) {
        Problem p = bhld(b, hkv * g, hkv, 128, len);
        GqaDecodeHeuristics.Split s = GqaDecodeHeuristics.splits(p, H100);
        assertTrue(s.splits() >= 1 && s.splits() <= GqaDecodeHeuristics.MAX_SPLITS, s.toString());
        assertEquals(0, s.chunk() % GqaDecodeHeuristics.CHUNK_ALIGN, s.toString());
        assertTrue((long) s.splits() * s.chunk() >= len, "splits must cover maxLen: " + s);
        assertTrue((long) (s.splits() - 1) * s.chunk() < len, "no split may start past maxLen: " + s);
        assertTrue(s.splits() == 1 || s.chunk() >= GqaDecodeHeuristics.MIN_CHUNK, s.toString());
    }

    @Test void autoFollowsTheMeasuredRows() {
        // harness 30c10a3: custom 1.10x at 32/8 d128 B=1 L=8192, 0.75x at B=4 L=8192, 1.35x at 64/8 B=1 L=131072
        assertEquals(Backend.CUSTOM, GqaDecodeHeuristics.decide(bhld(1, 32, 8, 128, 8192), H100, Backend.AUTO).backend());
        assertEquals(Backend.VENDOR, GqaDecodeHeuristics.decide(bhld(4, 32, 8, 128, 8192), H100, Backend.AUTO).backend());
        assertEquals(Backend.VENDOR, GqaDecodeHeuristics.decide(bhld(1, 64, 8, 128, 32768), H100, Backend.AUTO).backend());
        assertEquals(Backend.CUSTOM, GqaDecodeHeuristics.decide(bhld(1, 64, 8, 128, 131072), H100, Backend.AUTO).backend());
        assertEquals(Backend.CUSTOM, GqaDecodeHeuristics.decide(bhld(4, 16, 2, 64, 8192), H100, Backend.AUTO).backend());
        assertEquals(Backend.VENDOR, GqaDecodeHeuristics.decide(bhld(1, 32, 8, 128, 2048), H100, Backend.AUTO).backend());
        assertEquals(Backend.VENDOR, GqaDecodeHeuristics.decide(bhld(16, 32, 32, 128, 512), H100, Backend.AUTO).backend());
    }

    @Test void pagedCachesFavourCustomWhereTheGatherCosts() {
        // harness 30c10a3 paged16: 32/8 B=16 L=8192 1.95x, 64/8 B=16 L=8192 0.81x, 64/8 B=1 L=8192 1.22x
        assertEquals(Backend.CUSTOM, GqaDecodeHeuristics.decide(paged(16, 32, 8, 128, 16, 512), H100, Backend.AUTO).backend());
        assertEquals(Backend.VENDOR, GqaDecodeHeuristics.decide(paged(16, 64, 8, 128, 16, 512), H100, Backend.AUTO).backend());
        assertEquals(Backend.CUSTOM, GqaDecodeHeuristics.decide(paged(1, 64, 8, 128, 16, 512), H100, Backend.AUTO).backend());
        assertEquals(Backend.CUSTOM, GqaDecodeHeuristics.decide(paged(64, 32, 32, 128, 64, 128), H100, Backend.AUTO).backend());
        assertEquals(Backend.VENDOR, GqaDecodeHeuristics.decide(paged(64, 16, 2, 64, 16, 32), H100, Backend.AUTO).backend());
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
        assertTrue(d.variant().startsWith("split_kv_d128_g8x1_s"), d.variant());
        assertTrue(d.reason().contains("harness"), d.reason());
        Problem paged = new Problem(2, 8, 2, 64, 100, KvLayout.PAGED, 16, 7, DType.BF16);
        assertTrue(GqaDecodeHeuristics.decide(paged, H100, Backend.VENDOR).variant().endsWith("+gather"));
    }
}
