package dev.gapfill.ops;

import dev.gapfill.core.DType;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.UnsupportedShapeException;
import dev.gapfill.core.testing.SystemProperty;
import dev.gapfill.ops.DepthwiseConv3x3.Activation;
import dev.gapfill.ops.DepthwiseConv3x3.Layout;
import dev.gapfill.ops.GqaDecode.KvLayout;
import dev.gapfill.ops.GroupedGemm.WeightLayout;
import dev.gapfill.ops.GroupedGemmHeuristics.Shape;
import dev.gapfill.ops.GroupedGemmHeuristics.Variant;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Launch limits of sm_86 and sm_89 parts (RTX 3090, A10, A40; L4, L40S), which run the fatbins' sm_80 SASS: 99 KiB
 * (101 376 B) of opt-in dynamic shared memory per block, 100 KiB per SM, 1536 threads per SM, no clusters, no wgmma. Over
 * a broad grid of every op's shapes, every AUTO decision and every forced CUSTOM plan the heuristics accept must ask for a
 * launch these devices take: dynamic plus static shared memory within the opt-in limit, at most 1024 threads per block, no
 * variant built for sm_90a only. Where no custom plan fits, AUTO goes to the vendor and CUSTOM throws
 * {@link UnsupportedShapeException}.
 */
class Sm8xLaunchLimitsTest {
    private static final DeviceInfo RTX3090 = DeviceInfo.rtx3090ForTests();
    private static final DeviceInfo L4 = DeviceInfo.l4ForTests();
    private static final DeviceInfo[] SM8X = {
        RTX3090,
        withSms(RTX3090, "NVIDIA A10", 72),
        withSms(RTX3090, "NVIDIA A40", 84),
        L4,
        withSms(L4, "NVIDIA L40S", 142),
    };
    /** sm_86 / sm_89: 99 KiB per block. */
    private static final long OPTIN = 101_376;

    private static DeviceInfo withSms(DeviceInfo d, String name, int sms) {
        return new DeviceInfo(d.ordinal(), name, d.ccMajor(), d.ccMinor(), sms, d.l2Bytes(), d.smemPerBlockOptin(), d.smemPerSm(),
                d.totalMemBytes(), d.driverVersion(), d.runtimeVersion(), d.cublasVersion(), d.cudnnVersion());
    }

    /** What one launch asks of the device. */
    private record Launch(String what, long smemBytes, int threads) {}

    private static void assertLaunchFits(DeviceInfo info, Launch l, Object problem, List<String> failures, long[] largest) {
        largest[0] = Math.max(largest[0], l.smemBytes());
        boolean ok = l.smemBytes() >= 0 && l.smemBytes() <= info.smemPerBlockOptin() && l.threads() >= 1 && l.threads() <= 1024;
        if (!ok && failures.size() < 20) {
            failures.add(info.name() + " " + problem + ": " + l);
        }
    }

    private static void assertNoFailures(List<String> failures) {
        if (!failures.isEmpty()) {
            fail(failures.size() + " launches over the limits (first 20):\n" + String.join("\n", failures));
        }
    }

    @Test void factoriesDescribeSm86AndSm89() {
        assertEquals(86, RTX3090.cc());
        assertEquals(82, RTX3090.smCount());
        assertEquals(OPTIN, RTX3090.smemPerBlockOptin());
        assertEquals(102_400, RTX3090.smemPerSm());
        assertEquals(89, L4.cc());
        assertEquals(58, L4.smCount());
        assertEquals(OPTIN, L4.smemPerBlockOptin());
        assertEquals(102_400, L4.smemPerSm());
    }

    // ------------------------------------------------------------------ bmm

    /** The launch Bmm.run makes for a CUSTOM decision (its dispatch on the variant's prefix). */
    private static Launch bmmLaunch(BmmShape s, DeviceInfo info, Decision d) {
        String v = d.variant();
        if (v.startsWith("frag_")) {
            return new Launch(v, 0, BmmHeuristics.fragPlan(s, info).threads());
        }
        if (v.startsWith("frag32_")) {
            return new Launch(v, 0, BmmHeuristics.frag32Plan(s, info).threads());
        }
        if (v.startsWith("gemv_")) {
            return new Launch(v, 0, BmmHeuristics.gemvPlan(s).threads());
        }
        if (v.startsWith("wg_")) {
            BmmHeuristics.WgPlan p = BmmHeuristics.wgPlan(s, info);
            return new Launch(v, p.smemBytes(), p.threads());
        }
        if (v.startsWith("team_") || v.startsWith("team8_")) {
            BmmHeuristics.TeamPlan p = BmmHeuristics.teamPlan(s, info);
            return new Launch(v, p.smemBytes(), p.threads());
        }
        assertTrue(v.startsWith("small_"), v);
        BmmHeuristics.Plan p = BmmHeuristics.plan(s, info);
        return new Launch(v, p.smemBytes(), p.threads());
    }

    @Test void bmmPlansFitSm8x() {
        int[] dims = {1, 2, 7, 8, 16, 17, 32, 33, 48, 60, 64, 76, 96, 100, 112, 128};
        long[] batches = {1, 512, 2048, 8192};
        DType[] dtypes = {DType.F16, DType.BF16, DType.F32};
        List<String> failures = new ArrayList<>();
        long[] largest = {0};
        int custom = 0;
        int refused = 0;
        for (DeviceInfo info : new DeviceInfo[] {RTX3090, L4}) {
            for (DType dt : dtypes) {
                for (long batch : batches) {
                    for (int m : dims) {
                        for (int n : dims) {
                            for (int k : dims) {
                                for (int t = 0; t < 8; t++) {
                                    BmmShape s = BmmShape.of(dt, batch, m, n, k).withTransposes((t & 1) != 0, (t & 2) != 0)
                                            .withSharedB((t & 4) != 0);
                                    for (int align : new int[] {16, 8, 0}) {
                                        Decision auto = Bmm.decide(s, info, Backend.AUTO, align);
                                        if (auto.backend() == Backend.CUSTOM) {
                                            assertFalse(auto.variant().startsWith("wg_"), s + " " + auto);
                                            assertLaunchFits(info, bmmLaunch(s, info, auto), s + " AUTO align " + align, failures, largest);
                                            custom++;
                                        }
                                        Decision forced;
                                        try {
                                            forced = Bmm.decide(s, info, Backend.CUSTOM, align);
                                        } catch (UnsupportedShapeException e) {
                                            assertTrue(e.getMessage().contains("shared memory"), e.getMessage());
                                            refused++;
                                            continue;
                                        }
                                        assertFalse(forced.variant().startsWith("wg_"), s + " " + forced);
                                        assertLaunchFits(info, bmmLaunch(s, info, forced), s + " CUSTOM align " + align, failures, largest);
                                        custom++;
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        assertNoFailures(failures);
        assertTrue(custom > 100_000, "custom plans checked: " + custom);
        assertTrue(refused > 0, "F32 128^3 needs 135 168 B for bmm_small: refused on sm_86");
        System.out.println("bmm: largest shared memory on sm_86/sm_89 " + largest[0] + " B");
        assertTrue(largest[0] <= OPTIN, "largest " + largest[0]);
    }

    @Test void bmmWgmmaKernelNeverRunsBelowSm90() {
        for (DeviceInfo info : SM8X) {
            for (int d : new int[] {36, 60, 76, 100, 124, 128}) {
                BmmShape s = BmmShape.of(DType.F16, 2048, d, d, d);
                assertFalse(BmmHeuristics.useWg(s, info, 16), info.name() + " " + s);
                assertFalse(Bmm.decide(s, info, Backend.AUTO, 16).variant().startsWith("wg_"));
                assertFalse(Bmm.decide(s, info, Backend.CUSTOM, 16).variant().startsWith("wg_"));
            }
        }
        // F32 128^3 on sm_86: bmm_small needs 2 x 128 x 132 x 4 = 135 168 B > 101 376: vendor, and CUSTOM is refused by name
        BmmShape f32 = BmmShape.of(DType.F32, 2048, 128, 128, 128);
        assertEquals(135_168, BmmHeuristics.plan(f32, RTX3090).smemBytes());
        assertEquals(Backend.VENDOR, Bmm.decide(f32, RTX3090, Backend.AUTO, 16).backend());
        UnsupportedShapeException e = assertThrows(UnsupportedShapeException.class, () -> Bmm.decide(f32, RTX3090, Backend.CUSTOM, 16));
        assertTrue(e.getMessage().contains("101376"), e.getMessage());
        // F16 128^3: bmm_team's 174 080 B plan does not fit, bmm_small's 69 632 B does
        BmmShape f16 = BmmShape.of(DType.F16, 2048, 128, 128, 128);
        assertFalse(BmmHeuristics.useTeam(f16, RTX3090));
        assertEquals("small_mma_g1_t256", Bmm.decide(f16, RTX3090, Backend.CUSTOM, 16).variant());
        assertEquals(69_632, BmmHeuristics.plan(f16, RTX3090).smemBytes());
    }

    // ------------------------------------------------------------------ depthwiseConv3x3

    /** Every launch launchCustom may make for {@code p} (the NCHW path for each access width and pointer alignment). */
    private static List<Launch> depthwiseLaunches(DepthwiseConv3x3.Problem p, DeviceInfo info) {
        List<Launch> out = new ArrayList<>();
        if (DepthwiseConv3x3Heuristics.useRing(p)) {
            DepthwiseConv3x3Heuristics.RingGrid g = DepthwiseConv3x3Heuristics.ringGrid(p, info);
            out.add(new Launch("ring_s1 " + g.config(), g.smemBytes(), g.threads()));
        } else if (DepthwiseConv3x3Heuristics.useRingS2(p)) {
            DepthwiseConv3x3Heuristics.RingGrid g = DepthwiseConv3x3Heuristics.ringGridS2(p, info);
            out.add(new Launch("ring_s2 " + g.config(), g.smemBytes(), g.threads()));
        } else if (p.layout() == Layout.NHWC) {
            out.add(new Launch("nhwc", 0, DepthwiseConv3x3Heuristics.BLOCK));
        } else {
            for (int vw = DepthwiseConv3x3Heuristics.nchwVectorWidth(p); vw >= 1; vw /= 2) {
                boolean plane = false;
                if (DepthwiseConv3x3Heuristics.usePlane(p, vw)) {
                    for (int a = 0; a < 4; a++) {
                        DepthwiseConv3x3Heuristics.PlaneGrid g = DepthwiseConv3x3Heuristics.planeGrid(p, (a & 1) != 0, (a & 2) != 0);
                        if (g != null) {
                            out.add(new Launch(g.symbol(p), g.smemBytes(), g.threads()));
                            plane = true;
                        }
                    }
                }
                if (!plane) {
                    out.add(new Launch("nchw_v" + vw, 0, DepthwiseConv3x3Heuristics.BLOCK));
                }
            }
        }
        return out;
    }

    /** Every depthwise launch of the sweep below, with {@code property} = {@code value} (none when null). */
    private static long depthwiseSweep(String property, String value, List<String> failures, long[] largest) {
        if (property == null) {
            return depthwiseSweep("", failures, largest);
        }
        long[] checked = {0};
        SystemProperty.with(property, value, () -> checked[0] = depthwiseSweep(" " + property + "=" + value, failures, largest));
        return checked[0];
    }

    private static long depthwiseSweep(String label, List<String> failures, long[] largest) {
        long checked = 0;
        int[] ns = {1, 8, 32};
        int[] cs = {1, 3, 8, 16, 64, 96, 128, 130, 256, 512, 1024};
        int[][] hws = {{1, 1}, {2, 2}, {7, 7}, {14, 14}, {15, 13}, {28, 28}, {56, 56}, {64, 64}, {100, 100}, {112, 112},
                {224, 224}, {512, 512}, {3, 1000}, {1000, 3}};
        for (DeviceInfo info : new DeviceInfo[] {RTX3090, L4}) {
            for (DType dt : new DType[] {DType.F16, DType.BF16, DType.F32}) {
                for (Layout layout : Layout.values()) {
                    for (int stride = 1; stride <= 2; stride++) {
                        for (Activation act : Activation.values()) {
                            for (int n : ns) {
                                for (int c : cs) {
                                    for (int[] hw : hws) {
                                        if ((long) n * c * hw[0] * hw[1] >= Integer.MAX_VALUE) {
                                            continue;
                                        }
                                        DepthwiseConv3x3.Problem p = new DepthwiseConv3x3.Problem(dt, layout, n, c, hw[0], hw[1], stride,
                                                act, true, false);
                                        Decision d = DepthwiseConv3x3Heuristics.decide(p, info);
                                        if (d.backend() != Backend.CUSTOM) {
                                            continue;  // AUTO and CUSTOM run the same kernels: CUSTOM is refused where AUTO is VENDOR
                                        }
                                        for (Launch l : depthwiseLaunches(p, info)) {
                                            assertLaunchFits(info, l, p + label, failures, largest);
                                            checked++;
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return checked;
    }

    @Test void depthwisePlansFitSm8x() {
        List<String> failures = new ArrayList<>();
        long[] largest = {0};
        long checked = depthwiseSweep(null, null, failures, largest);
        // the knobs that reach the largest geometries: the plane kernel wherever it applies, the stride-2 ring's 2 x 4
        // geometry (F32: 67 584 B at 64 channel groups x 4 column groups), the F32 stride-1 ring's 2 x 4
        checked += depthwiseSweep(DepthwiseConv3x3Heuristics.PLANE_PROPERTY, "force", failures, largest);
        checked += depthwiseSweep(DepthwiseConv3x3Heuristics.RING_S2_PROPERTY, "true", failures, largest);
        checked += depthwiseSweep(DepthwiseConv3x3Heuristics.RING_S2_GEOMETRY_PROPERTY, "c2w4", failures, largest);
        checked += depthwiseSweep(DepthwiseConv3x3Heuristics.RING_F32_GEOMETRY_PROPERTY, "c2w4", failures, largest);
        assertNoFailures(failures);
        System.out.println("depthwise: largest shared memory on sm_86/sm_89 " + largest[0] + " B");
        assertTrue(checked > 10_000, "launches checked: " + checked);
        // the plane kernel's cap (80 KiB) is the largest any depthwise launch asks
        assertTrue(largest[0] <= DepthwiseConv3x3Heuristics.PLANE_SMEM_CAP, "largest " + largest[0]);
    }

    // ------------------------------------------------------------------ int8Mm

    @Test void int8PlansFitSm8x() {
        long[] ns = {1, 8, 64, 100, 1024, 4096, 5632, 14336, 28672, 65536};
        long[] ks = {16, 64, 256, 1008, 2048, 4096, 8192, 14336, 28672, 65536, Int8Mm.MAX_K};
        DType[] outs = {DType.I32, DType.F16, DType.BF16, DType.F32};
        List<String> failures = new ArrayList<>();
        long[] largest = {0};
        int checked = 0;
        for (DeviceInfo info : SM8X) {
            for (long m = 1; m <= Int8MmHeuristics.CUSTOM_MAX_M; m++) {
                for (long n : ns) {
                    for (long k : ks) {
                        for (DType out : outs) {
                            for (Backend b : new Backend[] {Backend.AUTO, Backend.CUSTOM}) {
                                Decision d = Int8MmHeuristics.decide(m, n, k, out, info, b);
                                if (d.backend() != Backend.CUSTOM) {
                                    continue;
                                }
                                Int8MmHeuristics.SkinnyPlan p = Int8MmHeuristics.skinnyPlan(m, n, k, info);
                                // + 4 B static (skinny_mma.cu's is_last)
                                assertLaunchFits(info, new Launch(p.symbol(out), p.smemBytes() + 4L, Int8MmHeuristics.THREADS),
                                        m + "x" + n + "x" + k + " " + out + " " + b, failures, largest);
                                assertTrue(p.splits() >= 1 && p.splits() <= 65535 && p.tilesN() >= 1);
                                checked++;
                            }
                        }
                    }
                }
            }
        }
        assertNoFailures(failures);
        System.out.println("int8: largest shared memory on sm_86/sm_89 " + largest[0] + " B");
        assertTrue(checked > 10_000, "plans checked: " + checked);
        assertTrue(largest[0] <= 72 * 1024 + 4, "largest " + largest[0]);  // the 72 KiB budget of A's slice
    }

    // ------------------------------------------------------------------ groupedGemm

    private static final int[] GG_GROUPS = {1, 2, 8, 16, 17, 64, 128, 160, 256, 512, 766, 767, 768, 1024, 2048, 4096};
    private static final long[] GG_ROWS = {1, 2, 8, 32, 128, 512, 767, 768, 1024, 2048, 4096, 8192, 65536};
    private static final int[][] GG_KN = {{2048, 2048}, {2048, 1024}, {1024, 2048}, {4096, 28672}, {7168, 4096}, {64, 64}, {768, 4096}};

    private static Launch groupedLaunch(Shape s, Variant v) {
        return new Launch(v.id(), v.smemBytes(s.layout(), s.groups()) + (long) v.threads / 32 * 4, v.threads);
    }

    @Test void groupedGemmPlansFitSm8x() {
        List<String> failures = new ArrayList<>();
        long[] largest = {0};
        int checked = 0;
        for (DeviceInfo info : SM8X) {
            for (int g : GG_GROUPS) {
                for (long t : GG_ROWS) {
                    for (int[] kn : GG_KN) {
                        for (boolean swiglu : new boolean[] {false, true}) {
                            for (WeightLayout l : WeightLayout.values()) {
                                for (DType dt : new DType[] {DType.F16, DType.BF16}) {
                                    Shape s = new Shape(g, t, kn[0], kn[1], swiglu, dt, l);
                                    for (Backend b : new Backend[] {Backend.AUTO, Backend.CUSTOM}) {
                                        Decision d = GroupedGemmHeuristics.decide(s, info, b);
                                        if (d.backend() != Backend.CUSTOM || d.variant().equals("unsupported")) {
                                            continue;
                                        }
                                        Variant v = Variant.valueOf(d.variant().toUpperCase(java.util.Locale.ROOT));
                                        assertFalse(v.hopper, s + " " + d);
                                        assertLaunchFits(info, groupedLaunch(s, v), s + " " + b, failures, largest);
                                        assertTrue(GroupedGemmHeuristics.grid(s, v, info) >= 1);
                                        checked++;
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        assertNoFailures(failures);
        System.out.println("groupedGemm: largest shared memory on sm_86/sm_89 " + largest[0] + " B");
        assertTrue(checked > 10_000, "plans checked: " + checked);
        assertTrue(largest[0] <= OPTIN, "largest " + largest[0]);
    }

    /**
     * The defect this class was written for: d16's schedule (3G + 1 ints after 92 160 B of ring) outgrows 99 KiB from
     * G = 767, and the sm_80 rule took it there (E = 1024 experts, 1024 routed rows: one row per active group), so the
     * launch asked for 104 452 B and failed in cuLaunchKernel. Now the tile rule falls back to m16/m64 with the reason.
     */
    @Test void groupedGemmDecodeTileNeverOutgrowsSm8xSharedMemory() {
        Shape down = new Shape(1024, 1024, 2048, 1024, false, DType.BF16, WeightLayout.KN);
        assertEquals(104_452, Variant.D16.smemBytes(down.layout(), down.groups()));
        for (DeviceInfo info : SM8X) {
            for (Backend b : new Backend[] {Backend.AUTO, Backend.CUSTOM}) {
                Decision d = GroupedGemmHeuristics.decide(down, info, b);
                assertEquals(Backend.CUSTOM, d.backend(), info.name() + " " + d);
                assertNotEquals("d16", d.variant(), info.name() + " " + b + " " + d);
                assertTrue(d.reason().contains("d16 not taken"), d.reason());
                Variant v = Variant.valueOf(d.variant().toUpperCase(java.util.Locale.ROOT));
                assertTrue(v.fits(down.layout(), down.groups(), info));
            }
        }
        // the bound: d16 fits up to G = 766 on 99 KiB (92 160 + 4 (3 G + 1) + 16 B static <= 101 376) and at every G the
        // custom path takes on the A100 and the H100, whose decisions do not change
        assertTrue(Variant.D16.fits(WeightLayout.NK, 766, RTX3090));
        assertFalse(Variant.D16.fits(WeightLayout.NK, 767, RTX3090));
        assertFalse(Variant.D16.fits(WeightLayout.KN, GroupedGemmHeuristics.MAX_CUSTOM_GROUPS, L4));
        assertTrue(Variant.D16.fits(WeightLayout.KN, GroupedGemmHeuristics.MAX_CUSTOM_GROUPS, DeviceInfo.a100ForTests()));
        assertEquals("d16", GroupedGemmHeuristics.decide(down, DeviceInfo.a100ForTests(), Backend.AUTO).variant());
        // below the bound sm_86 keeps the sm_80 rule's d16 (E = 64 down T = 1, top-8)
        assertEquals("d16", GroupedGemmHeuristics.decide(new Shape(64, 8, 1024, 2048, false, DType.BF16, WeightLayout.KN), RTX3090,
                Backend.AUTO).variant());
        // m64 (the largest tile sm_80 SASS has) fits every G the custom path takes: 99 604 B with NK weights at G = 4096
        for (WeightLayout l : WeightLayout.values()) {
            assertTrue(Variant.M64.fits(l, GroupedGemmHeuristics.MAX_CUSTOM_GROUPS, RTX3090), l.toString());
            assertTrue(Variant.M16.fits(l, GroupedGemmHeuristics.MAX_CUSTOM_GROUPS, RTX3090), l.toString());
        }
    }

    @Test void groupedGemmForcedVariantIsRefusedByNameWhereItDoesNotFit() {
        Shape big = new Shape(2048, 2048, 2048, 1024, false, DType.F16, WeightLayout.NK);
        Shape small = new Shape(64, 8, 2048, 1024, false, DType.F16, WeightLayout.NK);
        SystemProperty.with(GroupedGemmHeuristics.DEBUG_VARIANT, "d16", () -> {
            UnsupportedShapeException e = assertThrows(UnsupportedShapeException.class,
                    () -> GroupedGemmHeuristics.decide(big, RTX3090, Backend.CUSTOM));
            assertTrue(e.getMessage().contains("shared memory"), e.getMessage());
            assertEquals("d16", GroupedGemmHeuristics.decide(small, RTX3090, Backend.CUSTOM).variant());
            assertEquals("d16", GroupedGemmHeuristics.decide(big, DeviceInfo.a100ForTests(), Backend.CUSTOM).variant());
        });
        for (String hopper : new String[] {"w64", "w128n2", "w64s6"}) {
            SystemProperty.with(GroupedGemmHeuristics.DEBUG_VARIANT, hopper,
                    () -> assertThrows(UnsupportedShapeException.class, () -> GroupedGemmHeuristics.decide(small, L4, Backend.CUSTOM)));
        }
        for (String fitting : new String[] {"m16", "m64"}) {
            SystemProperty.with(GroupedGemmHeuristics.DEBUG_VARIANT, fitting,
                    () -> assertEquals(fitting, GroupedGemmHeuristics.decide(big, L4, Backend.CUSTOM).variant()));
        }
    }

    @Test void groupedGemmRefusesByNameADeviceWhereNoTileFits() {
        // a hypothetical part with 48 KiB per block: m16 at G = 1024 needs 46 080 + 4 (1024 + 17) + 16 = 50 260 B
        DeviceInfo tiny = new DeviceInfo(0, "48 KiB part", 8, 6, 16, 2L << 20, 48L << 10, 64L << 10, 8L << 30, 13000, 13000, 130100, 91400);
        Shape s = new Shape(1024, 1024, 2048, 1024, false, DType.F16, WeightLayout.KN);
        assertTrue(GroupedGemmHeuristics.customUnsupported(s, tiny).contains("shared memory"));
        assertEquals(Backend.VENDOR, GroupedGemmHeuristics.decide(s, tiny, Backend.AUTO).backend());
        assertEquals("unsupported", GroupedGemmHeuristics.decide(s, tiny, Backend.CUSTOM).variant());
        // and one where m64 does not fit takes m16
        Shape wide = new Shape(64, 65536, 2048, 2048, false, DType.F16, WeightLayout.NK);
        assertEquals("m64", GroupedGemmHeuristics.decide(wide, RTX3090, Backend.CUSTOM).variant());
        assertEquals("m16", GroupedGemmHeuristics.decide(new Shape(64, 65536, 2048, 2048, false, DType.F16, WeightLayout.NK),
                tiny, Backend.CUSTOM).variant());
    }

    // ------------------------------------------------------------------ gqaDecode

    @Test void gqaDecodePlansFitSm8x() {
        int[] batches = {1, 2, 4, 8, 16, 64, 256};
        int[][] heads = {{32, 8}, {64, 8}, {28, 4}, {32, 32}, {16, 2}, {8, 1}, {64, 1}, {40, 8}};
        int[] lens = {1, 63, 64, 512, 2048, 8192, 32768, 131072};
        List<String> failures = new ArrayList<>();
        long[] largest = {0};
        int custom = 0;
        int vendor = 0;
        for (DeviceInfo info : SM8X) {
            for (int b : batches) {
                for (int[] h : heads) {
                    for (int d : new int[] {64, 128, 256}) {
                        for (int len : lens) {
                            for (KvLayout layout : KvLayout.values()) {
                                GqaDecode.Problem p = layout == KvLayout.PAGED
                                        ? GqaDecode.Problem.paged(b, h[0], h[1], d, 16, (len + 15) / 16, DType.F16)
                                        : GqaDecode.Problem.contiguous(b, h[0], h[1], d, len, layout, DType.BF16);
                                Decision forced;
                                try {
                                    forced = GqaDecodeHeuristics.decide(p, info, Backend.CUSTOM);
                                } catch (UnsupportedShapeException e) {
                                    // D = 256 needs 139 264 B; D = 128 runs the 2-stage entries (69 632 B)
                                    assertTrue(d == 256 && e.getMessage().contains("shared memory"), e.getMessage());
                                    try {
                                        assertEquals(Backend.VENDOR, GqaDecodeHeuristics.decide(p, info, Backend.AUTO).backend());
                                        vendor++;
                                    } catch (UnsupportedShapeException both) {
                                        // B·Hq·maxLen >= 2^31 as well: neither backend covers it, refused by name
                                        assertTrue(both.getMessage().contains("score matrix"), both.getMessage());
                                    }
                                    continue;
                                }
                                Decision auto = GqaDecodeHeuristics.decide(p, info, Backend.AUTO);
                                assertEquals(Backend.CUSTOM, auto.backend());
                                assertEquals(forced.variant(), auto.variant());
                                assertFalse(forced.variant().startsWith("decode_mma_c"), p + " " + forced);
                                GqaDecodeHeuristics.Split sp = GqaDecodeHeuristics.splits(p, info);
                                assertEquals(sp, GqaDecodeHeuristics.withCluster(p, sp, info), "no cluster below sm_90");
                                assertEquals(0, sp.cluster());
                                // + 128 B static (decode_mma.cu's s_last, as ptxas reports it beside the 128-aligned dynamic array)
                                int st = GqaDecodeHeuristics.stages(d, info);
                                assertEquals(d == 128 ? GqaDecodeHeuristics.TWO_STAGES : GqaDecodeHeuristics.stages(d), st);
                                assertEquals("decode_mma_" + sp.kernelInfix() + GqaDecodeHeuristics.stageInfix(p, sp, st) + "d" + d,
                                        forced.variant().substring(0, forced.variant().indexOf("_h16x")), p + " " + forced);
                                assertLaunchFits(info, new Launch("decode_mma_" + sp.kernelInfix() + GqaDecodeHeuristics.stageInfix(p, sp, st) + "d" + d,
                                        GqaDecodeHeuristics.sharedBytes(d, sp.warps(), st) + 128L, sp.threads()), p, failures, largest);
                                assertTrue(sp.splits() >= 1 && sp.splits() <= GqaDecodeHeuristics.MAX_SPLITS);
                                custom++;
                                // the 8-warp D = 64 kernel needs 133 120 B: refused by name when forced
                                assertThrows(UnsupportedShapeException.class, () -> GqaDecodeHeuristics.forcedSplit(p, 2, 8, info));
                            }
                        }
                    }
                }
            }
        }
        assertNoFailures(failures);
        assertTrue(custom > 1000 && vendor > 1000, custom + " custom, " + vendor + " vendor");
        assertEquals(69_632 + 128, largest[0]);  // D = 128 at 2 stages; D = 64 67 584 B; D = 256 (139 264 B) goes to the vendor path
    }

    // ------------------------------------------------------------------ occupancy

    @Test void occupancyCountsSm8xWarpSlotsAndSharedMemory() {
        for (DeviceInfo info : SM8X) {
            // 48 warps per SM: 6 blocks of 256 threads at 32 registers (the register file holds 8)
            assertEquals(6, Occupancy.blocksPerSm(256, 32, 0, info));
            // 100 KiB per SM: one block of 67 584 B (the stride-2 F32 ring, the 4-warp D = 64 decode)
            assertEquals(1, Occupancy.blocksPerSm(128, 64, 67_584, info));
            assertEquals(1, Occupancy.bySharedMemory(67_584, info));
            // never 0 even where one block exceeds the SM (the plans refuse such blocks before they are sized)
            assertEquals(1, Occupancy.blocksPerSm(128, 64, 120_000, info));
        }
    }
}
