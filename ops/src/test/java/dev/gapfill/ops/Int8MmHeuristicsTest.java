package dev.gapfill.ops;

import dev.gapfill.core.DType;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.UnsupportedShapeException;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The int8_mm dispatch rules and launch plans, on synthetic H100/A100 descriptions. */
class Int8MmHeuristicsTest {
    private static final DeviceInfo H100 = DeviceInfo.h100ForTests();
    private static final DeviceInfo A100 = DeviceInfo.a100ForTests();

    @Test void workedExampleOfTheJavadoc() {
        // M=1, K=N=4096 on 132 SMs: 64 tiles of 64 channels, 4 splits of 1024 k, 256 CTAs (one wave).
        Int8MmHeuristics.SkinnyPlan p = Int8MmHeuristics.skinnyPlan(1, 4096, 4096, H100);
        assertEquals(8, p.tokensTile());
        assertEquals(64, p.blockN());
        assertEquals(64, p.tilesN());
        assertEquals(4, p.splits());
        assertEquals(1024, p.ks());
        assertEquals(1 * (1024 + 64), p.smemBytes());
        assertEquals("int8_mm_skinny_m8_f16", p.symbol(DType.F16));
        // counters for 64 tiles, then 64 tiles x 4 splits x (4 warps x 1 x 1 x 32 lanes x 16 bytes)
        assertEquals(64 * 4 + 64L * 4 * 4 * 32 * 16, p.workspaceBytes());
    }

    @Test void thePlanAvoidsANearlyEmptySecondWave() {
        // 16/8192/28672 (split sweep at e0aa70b, the old 128-channel m16 tile): 2 splits of 66.5 KiB CTAs fit 3 per SM,
        // 448 CTAs = a full wave and 52 more (119.5 us); 4 splits of 2048 k, 896 CTAs in two full-ish waves (94.1 us).
        // With m8's 64-channel tile (tile sweep, thirty-fifth session) 4 splits are 1792 CTAs at 5 per SM (F16 94.5 us;
        // 3 splits 96.3, 8 splits 92.1), where 2 splits would again leave a nearly empty third wave (111.7 us)
        Int8MmHeuristics.SkinnyPlan p = Int8MmHeuristics.skinnyPlan(16, 28672, 8192, H100);
        assertEquals(64, p.blockN());
        assertEquals(4, p.splits());
        assertEquals(2048, p.ks());
        // 8/8192/28672: 4 splits (88.3 us) rather than the 3 the old rule gave (92.3 us), within the 32 KiB budget
        Int8MmHeuristics.SkinnyPlan q = Int8MmHeuristics.skinnyPlan(8, 28672, 8192, H100);
        assertEquals(4, q.splits());
        assertTrue(q.smemBytes() <= 32 * 1024);
        // 32/8192/28672: 7 splits (105.5 us) rather than 4 (113.5 us)
        assertEquals(7, Int8MmHeuristics.skinnyPlan(32, 28672, 8192, H100).splits());
    }

    @Test void widerTilesMergeMoreSplitsThanTheEightRowTile() {
        // h100-13a499e-split-sweep.txt: a merge costs fewer k of the 16- to 64-row tiles, whose k is dearer
        assertEquals(128, Int8MmHeuristics.mergeCostK(8));
        assertEquals(72, Int8MmHeuristics.mergeCostK(64));
        // m16 has m8's tile and merge cost since the thirty-fifth session (h100-tile-sweep.txt)
        assertEquals(128, Int8MmHeuristics.mergeCostK(16));
        assertEquals(72, Int8MmHeuristics.mergeCostK(32));
        // 64/4096/4096: 8 splits (23.2 us) rather than 4 (26.8 us); 64/14336/4096: 19 (54.6 us) rather than 14 (64.1 us)
        assertEquals(8, Int8MmHeuristics.skinnyPlan(64, 4096, 4096, H100).splits());
        assertEquals(19, Int8MmHeuristics.skinnyPlan(64, 4096, 14336, H100).splits());
        // the eight-row tile keeps 4 splits at M = 1, K = N = 4096 (13.98 us; 8 splits 14.50 us)
        assertEquals(4, Int8MmHeuristics.skinnyPlan(1, 4096, 4096, H100).splits());
    }

    @Test void residentCtasFollowRegistersAndSharedMemory() {
        // the occupancy API's answers in the H100 split sweep
        assertEquals(5, Int8MmHeuristics.ctasPerSm(8, 1 * (1024 + 64), H100));
        assertEquals(3, Int8MmHeuristics.ctasPerSm(8, 8 * (8192 + 64), H100));
        // m16: 96 registers since the thirty-fifth session (5 per SM, the tile sweep's "4(5/SM)" at 16/8192/28672; 104 and
        // 4 per SM before)
        assertEquals(5, Int8MmHeuristics.ctasPerSm(16, 16 * (2048 + 64), H100));
        assertEquals(3, Int8MmHeuristics.ctasPerSm(16, 16 * (4096 + 64), H100));
        assertEquals(4, Int8MmHeuristics.ctasPerSm(32, 32 * (1024 + 64), H100));
        assertEquals(1, Int8MmHeuristics.ctasPerSm(32, 32 * (4096 + 64), H100));
        // two CTAs of 115,712 bytes would fill the SM's 228 KiB exactly with the 1 KiB reserved each; the API said 1
        assertEquals(1, Int8MmHeuristics.ctasPerSm(16, 16 * (7168 + 64), H100));
        // never zero, even for a slice larger than an SM's shared memory
        assertEquals(1, Int8MmHeuristics.ctasPerSm(64, 300 * 1024, A100));
    }

    @Property(tries = 300)
    void plansCoverKExactlyAndFitTheirBudgets(@ForAll @IntRange(min = 1, max = 64) int m, @ForAll @IntRange(min = 1, max = 70000) int n,
                                              @ForAll @IntRange(min = 1, max = 8191) int k16, @ForAll boolean a100) {
        long k = 16L * k16;
        Int8MmHeuristics.SkinnyPlan p = Int8MmHeuristics.skinnyPlan(m, n, k, a100 ? A100 : H100);
        assertTrue(p.tokensTile() >= m && p.tokensTile() <= 64, "tile covers m");
        assertEquals(0, p.ks() % p.step(), "ks is whole steps");
        assertTrue((long) p.splits() * p.ks() >= k && (long) (p.splits() - 1) * p.ks() < k, "splits cover k, none empty");
        assertTrue((long) p.tilesN() * p.blockN() >= n && (long) (p.tilesN() - 1) * p.blockN() < n, "tiles cover n");
        assertEquals((long) m * (p.ks() + 64), p.smemBytes());
        assertTrue(p.smemBytes() <= Int8MmHeuristics.smemBudget(m) || p.ks() == p.step(), "shared memory within budget");
        assertTrue(p.smemBytes() <= (a100 ? A100 : H100).smemPerBlockOptin(), "fits the device");
        assertEquals(p.splits() > 1, p.workspaceBytes() > 0, "workspace only for split-K");
        assertTrue(p.splits() <= 65535, "grid y limit");
    }

    @Test void autoFollowsTheMeasuredRegimes() {
        // M <= 8: custom, except small I32 problems
        assertEquals(Backend.CUSTOM, decide(1, 4096, 4096, DType.I32).backend());
        assertEquals(Backend.CUSTOM, decide(8, 14336, 4096, DType.F16).backend());
        assertEquals(Backend.VENDOR, decide(4, 5632, 2048, DType.I32).backend());
        assertEquals(Backend.VENDOR, decide(2, 5632, 2048, DType.I32).backend());
        assertEquals(Backend.VENDOR, decide(8, 5632, 2048, DType.I32).backend());
        // M = 1 stays custom for small I32 problems too (four int8 sweeps: custom 0.95-1.02x cuBLASLt's time)
        assertEquals(Backend.CUSTOM, decide(1, 5632, 2048, DType.I32).backend());
        assertEquals(Backend.CUSTOM, decide(1, 1024, 1024, DType.I32).backend());
        // 4 < M <= 8, I32, K*N >= 64Mi: cuBLASLt (benchmark at 6d84317); the boundaries on each side stay custom
        assertEquals(Backend.VENDOR, decide(8, 8192, 8192, DType.I32).backend());
        assertEquals(Backend.VENDOR, decide(5, 28672, 8192, DType.I32).backend());
        assertEquals(Backend.CUSTOM, decide(4, 8192, 8192, DType.I32).backend());
        assertEquals(Backend.CUSTOM, decide(8, 14336, 4096, DType.I32).backend());
        assertEquals(Backend.CUSTOM, decide(8, 8192, 8192, DType.F16).backend());
        assertEquals(Backend.CUSTOM, decide(8, 28672, 8192, DType.BF16).backend());
        assertEquals(Backend.CUSTOM, decide(4, 5632, 2048, DType.BF16).backend());
        // 9..16: custom for float outputs (the vendor adds a scaling pass) up to K = 6144, cuBLASLt for I32 (thirty-fifth
        // session) and, since the forty-ninth, for float outputs at K >= 8192, where custom was 0.2-4.6 % slower in every sweep
        assertEquals(Backend.VENDOR, decide(16, 4096, 14336, DType.I32).backend());
        assertEquals(Backend.VENDOR, decide(16, 8192, 8192, DType.F16).backend());
        assertEquals(Backend.VENDOR, decide(16, 4096, 14336, DType.BF16).backend());
        assertEquals(Backend.VENDOR, decide(12, 28672, 8192, DType.F32).backend());
        assertEquals(Backend.CUSTOM, decide(16, 14336, 4096, DType.F16).backend());
        assertTrue(decide(16, 14336, 4096, DType.F16).variant().startsWith("skinny_m16_splitk"));
        assertEquals(Backend.CUSTOM, decide(16, 1024, Int8MmHeuristics.M16_FLOAT_CUSTOM_MAX_K, DType.BF16).backend());
        assertEquals(Backend.VENDOR, decide(16, 1024, Int8MmHeuristics.M16_FLOAT_CUSTOM_MAX_K + 16, DType.BF16).backend());
        assertEquals(Backend.CUSTOM, decide(8, 8192, 8192, DType.F16).backend(), "M <= 8 keeps its own rules");
        assertEquals(Backend.CUSTOM, decide(9, 14336, 4096, DType.BF16).backend());
        assertEquals(Backend.CUSTOM, decide(12, 5632, 2048, DType.F32).backend());
        assertEquals(Backend.VENDOR, decide(16, 4096, 4096, DType.I32).backend());
        assertEquals(Backend.VENDOR, decide(16, 28672, 8192, DType.I32).backend());
        assertEquals(Backend.VENDOR, decide(9, 5632, 2048, DType.I32).backend());
        // >= 17: vendor
        assertEquals(Backend.VENDOR, decide(17, 4096, 4096, DType.I32).backend());
        assertEquals(Backend.VENDOR, decide(64, 4096, 4096, DType.F16).backend());
        assertEquals(Backend.VENDOR, decide(128, 4096, 4096, DType.I32).backend());
        assertEquals("cublaslt_int8_tn+dequant_bf16", decide(128, 4096, 4096, DType.BF16).variant());
    }

    @Test void forcedBackendsAreHonouredOrRefused() {
        assertEquals(Backend.VENDOR, Int8MmHeuristics.decide(1, 4096, 4096, DType.I32, H100, Backend.VENDOR).backend());
        Decision c = Int8MmHeuristics.decide(64, 4096, 4096, DType.F16, H100, Backend.CUSTOM);
        assertEquals(Backend.CUSTOM, c.backend());
        assertTrue(c.variant().startsWith("skinny_m64_splitk"), c.variant());
        UnsupportedShapeException e = assertThrows(UnsupportedShapeException.class,
                () -> Int8MmHeuristics.decide(65, 4096, 4096, DType.I32, H100, Backend.CUSTOM));
        assertEquals("a", e.argument());
        DeviceInfo turing = new DeviceInfo(0, "T4", 7, 5, 40, 4L << 20, 64L << 10, 64L << 10, 16L << 30, 13000, 13000, 130100, 91400);
        assertThrows(UnsupportedShapeException.class, () -> Int8MmHeuristics.decide(1, 64, 64, DType.I32, turing, Backend.CUSTOM));
        assertEquals(Backend.VENDOR, Int8MmHeuristics.decide(1, 4096, 4096, DType.I32, turing, Backend.AUTO).backend());
        assertEquals("backend", assertThrows(dev.gapfill.core.ArgumentException.class,
                () -> Int8MmHeuristics.decide(1, 64, 64, DType.I32, H100, Backend.REFERENCE)).argument());
    }

    /** The public "what would run" entry refuses shapes no tensors can have, naming them, before its plans divide by k's steps. */
    @Test void decideByNumbersRefusesShapesNoCallCanHave() {
        long[][] bad = {{1, 4096, 0}, {1, 4096, 8}, {1, 4096, 24}, {1, 4096, Int8Mm.MAX_K + 16}, {0, 4096, 4096}, {1, 0, 4096}};
        String[] named = {"k", "k", "k", "k", "m", "n"};
        for (int i = 0; i < bad.length; i++) {
            long[] b = bad[i];
            for (Backend be : new Backend[] {Backend.AUTO, Backend.CUSTOM, Backend.VENDOR}) {
                assertEquals(named[i], assertThrows(dev.gapfill.core.ArgumentException.class,
                        () -> Int8MmHeuristics.decide(b[0], b[1], b[2], DType.I32, H100, be)).argument(), java.util.Arrays.toString(b) + " " + be);
            }
        }
        assertEquals("info", assertThrows(dev.gapfill.core.ArgumentException.class,
                () -> Int8MmHeuristics.decide(1, 64, 64, DType.I32, null, Backend.AUTO)).argument());
        assertEquals(Backend.CUSTOM, Int8MmHeuristics.decide(1, 64, Int8Mm.MAX_K, DType.I32, H100, Backend.CUSTOM).backend());
    }

    @Property(tries = 200)
    void autoNeverPicksCustomWhereItCannotRun(@ForAll @IntRange(min = 1, max = 300) int m, @ForAll @IntRange(min = 1, max = 40000) int n,
                                              @ForAll @IntRange(min = 1, max = 2000) int k16) {
        Decision d = Int8MmHeuristics.decide(m, n, 16L * k16, DType.F32, H100, Backend.AUTO);
        if (d.backend() == Backend.CUSTOM) {
            // F32 output: custom from M = 1 to 16 (M = 9..16 since the thirty-fifth session), never past the kernels' 64
            assertTrue(m <= 16, "custom chosen only where it was measured faster: " + d);
        } else {
            // ... except 9 <= M <= 16 past K = 6144, where cuBLASLt was the faster in every sweep (forty-ninth session)
            assertTrue(m > 16 || m > 8 && 16L * k16 > Int8MmHeuristics.M16_FLOAT_CUSTOM_MAX_K,
                    "a float output at M <= 16 runs custom on an H100 (M <= 8 at any K, 9..16 up to K = 6144): " + d);
        }
        assertTrue(!d.reason().isBlank());
    }

    private static Decision decide(long m, long n, long k, DType out) {
        return Int8MmHeuristics.decide(m, n, k, out, H100, Backend.AUTO);
    }
}
