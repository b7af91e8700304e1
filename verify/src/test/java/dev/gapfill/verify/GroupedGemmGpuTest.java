package dev.gapfill.verify;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Resources;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.UnsupportedShapeException;
import dev.gapfill.core.testing.GpuTest;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.core.testing.SystemProperty;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.GroupedGemm;
import dev.gapfill.ops.GroupedGemm.Options;
import dev.gapfill.ops.GroupedGemm.VendorPath;
import dev.gapfill.ops.GroupedGemm.WeightLayout;
import dev.gapfill.ops.GroupedGemmHeuristics;
import dev.gapfill.ops.GroupedGemmHeuristics.Variant;
import dev.gapfill.ops.reference.GroupedGemmReference;
import dev.gapfill.verify.arbitraries.GapfillArbitraries;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.bytedeco.cuda.cudart.CUgraphExec_st;
import org.bytedeco.cuda.cudart.CUgraph_st;
import org.bytedeco.cuda.global.cudart;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Grouped GEMM on the GPU: the custom kernel and both cuBLAS paths against the fp64 reference, every
 * element, outputs poisoned first. Bound: {@code Tolerance.accumulation(dtype, K, 2)} (fp32 accumulation on
 * tensor cores, growth 2) applied through {@link GroupedGemmReference.Result#errorScale}, which propagates the
 * two accumulations' bounds through the SwiGLU and row-scale epilogue (|silu'| ≤ 1.1, 10 fp32 roundings) and,
 * for the grouped-batched peer, its extra rounding of the GEMM result to the dtype.
 */
@GpuTest
class GroupedGemmGpuTest {
    private static final Device GPU = Device.cuda(0);

    /** One random problem: host copies for the reference, device tensors for the op. */
    static final class Problem implements AutoCloseable {
        final int groups, rows, xRows, k, n;
        final DType dt;
        final WeightLayout layout;
        final boolean swiglu;
        int[] off;
        final int[] gather;
        final double[] scale;
        final Tensor hx, hw, x, w, offsets, gatherT, scaleT;

        Problem(Random rnd, int groups, int rows, int k, int n, DType dt, WeightLayout layout, boolean swiglu, boolean gather,
                boolean scale, boolean oneGroup) {
            this.groups = groups;
            this.rows = rows;
            this.xRows = gather ? Math.max(1, rows / 2 + 3) : rows;
            this.k = k;
            this.n = n;
            this.dt = dt;
            this.layout = layout;
            this.swiglu = swiglu;
            this.off = routing(rnd, groups, rows, oneGroup);
            hx = Poison.random(Device.CPU, dt, rnd, xRows, k);
            hw = layout == WeightLayout.KN ? Poison.random(Device.CPU, dt, rnd, groups, k, n) : Poison.random(Device.CPU, dt, rnd, groups, n, k);
            x = hx.to(GPU);
            w = hw.to(GPU);
            offsets = Tensor.ofInts(GPU, off, groups + 1);
            if (gather) {
                this.gather = new int[rows];
                for (int r = 0; r < rows; r++) {
                    this.gather[r] = rnd.nextInt(xRows);
                }
                gatherT = Tensor.ofInts(GPU, this.gather, rows);
            } else {
                this.gather = null;
                gatherT = null;
            }
            if (scale) {
                this.scale = new double[rows];
                float[] f = new float[rows];
                for (int r = 0; r < rows; r++) {
                    f[r] = GapfillArbitraries.uniformNonZero(rnd, -2, 2);
                    this.scale[r] = f[r];
                }
                scaleT = Tensor.of(GPU, DType.F32, f, rows);
            } else {
                this.scale = null;
                scaleT = null;
            }
        }

        static int[] routing(Random rnd, int groups, int rows, boolean oneGroup) {
            int[] cnt = new int[groups];
            if (oneGroup) {
                cnt[rnd.nextInt(groups)] = rows;
            } else {
                for (int r = 0; r < rows; r++) {
                    int g = rnd.nextInt(groups);
                    if (groups > 2 && g % 3 == 1) {
                        g = (g + 1) % groups;  // every third group stays empty
                    }
                    cnt[g]++;
                }
            }
            int[] off = new int[groups + 1];
            for (int g = 0; g < groups; g++) {
                off[g + 1] = off[g] + cnt[g];
            }
            return off;
        }

        int nOut() { return swiglu ? n / 2 : n; }

        Options options(Backend b, VendorPath vp) {
            return Options.builder().layout(layout).gather(gatherT).swiglu(swiglu).rowScale(scaleT).backend(b).vendorPath(vp).build();
        }

        /** Runs on a poisoned output and compares every element. */
        Verdict runAndCheck(Backend b, VendorPath vp, Stream s) {
            try (Tensor out = Poison.poisoned(GPU, dt, rows, nOut())) {
                GroupedGemm.run(x, w, offsets, options(b, vp), out, s);
                if (s != null) {
                    s.synchronize();
                }
                return check(out, GroupedGemmVerification.roundsBeforeEpilogue(x, w, offsets, options(b, vp)));
            }
        }

        Verdict check(Tensor out, boolean roundedIntermediate) {
            GroupedGemmReference.Result ref = GroupedGemmReference.compute(hx, hw, off, layout, gather, swiglu, scale);
            Tolerance tol = Tolerance.accumulation(dt, k, 2);
            return Verifier.compare(out, ref.value(), ref.errorScale(tol.accTerm(), dt, roundedIntermediate), tol, "reference");
        }

        @Override public void close() {
            for (Tensor t : new Tensor[] {hx, hw, x, w, offsets, gatherT, scaleT}) {
                if (t != null) {
                    t.close();
                }
            }
        }

        @Override public String toString() {
            return String.format("G=%d T=%d K=%d N=%d %s %s%s%s%s", groups, rows, k, n, dt, layout, swiglu ? " swiglu" : "",
                    gather != null ? " gather" : "", scale != null ? " scale" : "");
        }
    }

    private static final int[] KS = {8, 16, 64, 72, 136, 200};

    @Property(tries = 60)
    void everyPathMatchesTheReference(@ForAll @IntRange(min = 1, max = 9) int groups, @ForAll @IntRange(min = 1, max = 220) int rows,
                                      @ForAll @IntRange(min = 0, max = 5) int kIndex, @ForAll @IntRange(min = 1, max = 20) int n16,
                                      @ForAll boolean bf16, @ForAll boolean nk, @ForAll boolean swiglu, @ForAll boolean gather,
                                      @ForAll boolean scale, @ForAll @IntRange(min = 0, max = 2) int path, @ForAll long seed) {
        Random rnd = new Random(seed);
        Backend b = path == 0 ? Backend.CUSTOM : Backend.VENDOR;
        VendorPath vp = path == 2 ? VendorPath.GROUPED_BATCHED : VendorPath.LOOP;
        try (Problem p = new Problem(rnd, groups, rows, KS[kIndex], 16 * n16, bf16 ? DType.BF16 : DType.F16,
                nk ? WeightLayout.NK : WeightLayout.KN, swiglu, gather, scale, false); Stream s = Stream.create(GPU)) {
            Verdict v = p.runAndCheck(b, vp, s);
            assertTrue(v.pass(), b + "/" + vp + " " + p + ": " + v);
        }
    }

    /** CUSTOM, VENDOR (the per-group loop) and AUTO, then the grouped-batched vendor call, each against the reference. */
    private static void everyBackendMatchesTheReference(Problem p) {
        for (Backend b : new Backend[] {Backend.CUSTOM, Backend.VENDOR, Backend.AUTO}) {
            Verdict v = p.runAndCheck(b, VendorPath.LOOP, null);
            assertTrue(v.pass(), b + " " + p + ": " + v);
        }
        Verdict v = p.runAndCheck(Backend.VENDOR, VendorPath.GROUPED_BATCHED, null);
        assertTrue(v.pass(), "grouped-batched " + p + ": " + v);
    }

    @Test void boundaryShapesOnEveryBackend() {
        Random rnd = new Random(11);
        Object[][] cases = {
            // groups, rows, K, N, swiglu, oneGroup
            {1, 37, 64, 64, true, false},     // G = 1
            {6, 97, 72, 48, true, true},      // every row in one group, the others empty
            {5, 1, 72, 48, true, false},      // T_total = 1
            {4, 17, 72, 40, false, false},    // K and N off the tile (72 = 64 + 8, 40 < 64)
            {3, 130, 8, 16, false, false},    // the smallest K and N
            {64, 20, 32, 32, false, false},   // more groups than rows
        };
        for (Object[] c : cases) {
            for (DType dt : new DType[] {DType.F16, DType.BF16}) {
                for (WeightLayout l : WeightLayout.values()) {
                    try (Problem p = new Problem(rnd, (int) c[0], (int) c[1], (int) c[2], (int) c[3], dt, l, (boolean) c[4], true, true,
                            (boolean) c[5])) {
                        everyBackendMatchesTheReference(p);
                    }
                }
            }
        }
    }

    /**
     * The regime the op is for, fine-grained mixture of experts: 256 experts with 64 routed rows (top-8 of 8 tokens), and
     * the custom kernel's group limit, 4096, with most groups empty, on every backend and both vendor formulations. The
     * random property above stops at 9 groups and the boundary cases at 64.
     */
    @Test void manyGroupsAsInFineGrainedMoe() {
        Random rnd = new Random(47);
        Object[][] cases = {
            // groups, rows, K, N, swiglu, oneGroup
            {256, 64, 128, 64, true, false},
            {256, 512, 64, 32, false, false},
            {GroupedGemmHeuristics.MAX_CUSTOM_GROUPS, 100, 16, 16, false, false},
            {GroupedGemmHeuristics.MAX_CUSTOM_GROUPS, 1, 32, 32, true, false},
        };
        for (Object[] c : cases) {
            for (WeightLayout l : WeightLayout.values()) {
                DType dt = l == WeightLayout.KN ? DType.BF16 : DType.F16;
                try (Problem p = new Problem(rnd, (int) c[0], (int) c[1], (int) c[2], (int) c[3], dt, l, (boolean) c[4], true, true,
                        (boolean) c[5])) {
                    everyBackendMatchesTheReference(p);
                }
            }
        }
    }

    /**
     * The grouped-batched vendor call no longer synchronizes after cuBLAS: its host arrays stay in a pooled slot until
     * an event recorded after the call has completed. Eight calls queued back to back on two streams, with group counts
     * that make the pool grow (64, then 128 and 256 groups of capacity) and calls of one stream still running while the
     * other takes a slot, each into its own poisoned output, nothing synchronized until all are queued: every element
     * of every output against the reference. A slot reused while its call's copy or GEMM could still read it would give
     * one call another's sizes or pointers.
     */
    @Test void groupedBatchedCallsInFlightOnTwoStreamsKeepTheirOwnArrays() {
        Random rnd = new Random(53);
        int[] groups = {3, 70, 5, 130, 2, 70, 9, 200};
        Problem[] ps = new Problem[groups.length];
        Tensor[] outs = new Tensor[groups.length];
        try (Stream s1 = Stream.create(GPU); Stream s2 = Stream.create(GPU)) {
            try {
                for (int i = 0; i < groups.length; i++) {
                    ps[i] = new Problem(rnd, groups[i], 4 * groups[i] + 37, 136, 64, i % 2 == 0 ? DType.BF16 : DType.F16,
                            i % 3 == 0 ? WeightLayout.NK : WeightLayout.KN, i % 2 == 1, i % 4 == 1, i % 4 != 3, false);
                    outs[i] = Poison.poisoned(GPU, ps[i].dt, ps[i].rows, ps[i].nOut());
                }
                for (int i = 0; i < groups.length; i++) {  // host offsets: no call synchronizes, all eight queue at once
                    GroupedGemm.run(ps[i].x, ps[i].w, ps[i].offsets, ps[i].options(Backend.VENDOR, VendorPath.GROUPED_BATCHED)
                            .withHostOffsets(ps[i].off), outs[i], i % 2 == 0 ? s1 : s2);
                }
                s1.synchronize();
                s2.synchronize();
                for (int i = 0; i < groups.length; i++) {
                    Verdict v = ps[i].check(outs[i], GroupedGemmVerification.roundsBeforeEpilogue(ps[i].x, ps[i].w, ps[i].offsets,
                            ps[i].options(Backend.VENDOR, VendorPath.GROUPED_BATCHED)));
                    assertTrue(v.pass(), "call " + i + " " + ps[i] + ": " + v);
                }
                String pool = "grouped_gemm grouped-batched host arrays";
                // at least the 256-group slot (a completed slot too small for a later call is freed, so the count varies)
                assertTrue(Resources.cacheSizes(GPU).get(pool) >= 1, "the calls' slots are pooled: " + Resources.cacheSizes(GPU));
                Resources.release(GPU);
                assertEquals(0, (int) Resources.cacheSizes(GPU).get(pool), "Resources.release frees the pooled slots");
            } finally {
                for (int i = 0; i < groups.length; i++) {
                    if (outs[i] != null) {
                        outs[i].close();
                    }
                    if (ps[i] != null) {
                        ps[i].close();
                    }
                }
            }
        }
    }

    /**
     * Every tile the device has (the sm_90 wgmma tiles only on compute capability 9.0), forced through
     * {@link GroupedGemmHeuristics#DEBUG_VARIANT}, on the boundary shapes and on problems with one to three row blocks
     * per group in both layouts and dtypes, with and without SwiGLU: each element against the fp64 reference. The
     * wgmma tiles read 128-byte-swizzled shared tiles through descriptors, K-major for X and NK weights and MN-major
     * for KN weights; a wrong stride or swizzle shows up as wrong elements here.
     */
    @Test void everyVariantMatchesTheReference() {
        int cc = Gpu.device(GPU).info().cc();
        Object[][] cases = {
            // groups, rows, K, N, swiglu, oneGroup
            {1, 37, 64, 64, true, false},
            {6, 97, 72, 48, true, true},
            {5, 1, 72, 48, true, false},
            {4, 17, 72, 40, false, false},
            {3, 130, 8, 16, false, false},
            {64, 20, 32, 32, false, false},
            {5, 300, 200, 272, true, false},   // several row blocks per group, K over several stages, N over two 256-wide tiles
            {3, 400, 1032, 528, false, false}, // K = 16 · 64 + 8: sixteen full k tiles and a partial one
        };
        Random rnd = new Random(29);
        int[] runs = {0};
        for (Variant v : Variant.values()) {
            if (v.hopper && cc != 90) {
                continue;
            }
            SystemProperty.with(GroupedGemmHeuristics.DEBUG_VARIANT, v.id(), () -> {
                for (Object[] c : cases) {
                    for (DType dt : new DType[] {DType.F16, DType.BF16}) {
                        for (WeightLayout l : WeightLayout.values()) {
                            try (Problem p = new Problem(rnd, (int) c[0], (int) c[1], (int) c[2], (int) c[3], dt, l, (boolean) c[4], true,
                                    true, (boolean) c[5])) {
                                Verdict verdict = p.runAndCheck(Backend.CUSTOM, VendorPath.LOOP, null);
                                assertTrue(verdict.pass(), v.id() + " " + p + ": " + verdict);
                                runs[0]++;
                            }
                        }
                    }
                }
            });
        }
        assertTrue(runs[0] >= 3 * 8 * 4, "ran " + runs[0]);
    }

    @Test void newOutputOnThePerThreadStream() {
        try (Problem p = new Problem(new Random(5), 8, 50, 64, 128, DType.BF16, WeightLayout.KN, true, true, true, false);
             Tensor out = primedRun(p)) {
            assertEquals(p.rows, out.dim(0));
            assertEquals(64, out.dim(1));
            Verdict v = p.check(out, false);
            assertTrue(v.pass(), v.toString());
        }
    }

    @Test void customRejectsShapesItCannotTakeAndVendorTakesThem() {
        // K = 12 is not a multiple of 8: CUSTOM throws, VENDOR and AUTO run cuBLAS
        try (Problem p = new Problem(new Random(6), 3, 20, 12, 32, DType.F16, WeightLayout.KN, true, true, true, false)) {
            assertThrows(UnsupportedShapeException.class, () -> p.runAndCheck(Backend.CUSTOM, VendorPath.LOOP, null));
            assertTrue(p.runAndCheck(Backend.VENDOR, VendorPath.LOOP, null).pass());
            assertTrue(p.runAndCheck(Backend.AUTO, VendorPath.LOOP, null).pass());
            assertEquals(Backend.VENDOR, GroupedGemm.decide(p.x, p.w, p.offsets, p.options(Backend.AUTO, VendorPath.LOOP)).backend());
        }
    }

    /** Capture once, change the routing on the device, replay: the schedule is rebuilt from the new offsets. */
    @Test void graphReplayFollowsOffsetsChangedOnTheDevice() {
        try (Problem p = new Problem(new Random(8), 8, 150, 72, 48, DType.BF16, WeightLayout.NK, true, true, true, false);
             Stream s = Stream.create(GPU); Tensor out = Poison.poisoned(GPU, DType.BF16, 150, 24)) {
            Options o = p.options(Backend.AUTO, VendorPath.LOOP);
            GroupedGemm.run(p.x, p.w, p.offsets, o.withBackend(Backend.CUSTOM), out, s);  // loads the module outside the capture
            s.synchronize();
            var cd = Gpu.device(GPU);
            CUgraph_st graph = new CUgraph_st();
            CUgraphExec_st exec = new CUgraphExec_st();
            cd.check(cudart.cudaStreamBeginCapture(s.handle(), cudart.cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
            try {
                GroupedGemm.run(p.x, p.w, p.offsets, o, out, s);  // AUTO under capture: the custom path
            } finally {
                cd.check(cudart.cudaStreamEndCapture(s.handle(), graph), "cudaStreamEndCapture");
            }
            cd.check(cudart.cudaGraphInstantiate(exec, graph, 0L), "cudaGraphInstantiate");
            try {
                int[] cnt = new int[8];
                for (int r = 0; r < 150; r++) {
                    cnt[(r * 7 + 3) % 5]++;  // groups 5..7 empty now
                }
                int[] off = new int[9];
                for (int g = 0; g < 8; g++) {
                    off[g + 1] = off[g] + cnt[g];
                }
                p.offsets.copyFrom(off);
                p.off = off;
                out.fillBytes(0xff, s);
                cd.check(cudart.cudaGraphLaunch(exec, s.handle()), "cudaGraphLaunch");
                s.synchronize();
                Verdict v = p.check(out, false);
                assertTrue(v.pass(), v.toString());
            } finally {
                cudart.cudaGraphExecDestroy(exec);
                cudart.cudaGraphDestroy(graph);
            }
        }
    }

    @Test void vendorUnderCaptureIsAClearError() {
        try (Problem p = new Problem(new Random(9), 4, 30, 64, 64, DType.F16, WeightLayout.KN, false, false, false, false);
             Stream s = Stream.create(GPU); Tensor out = Tensor.empty(GPU, DType.F16, s, 30, 64)) {
            var cd = Gpu.device(GPU);
            CUgraph_st graph = new CUgraph_st();
            cd.check(cudart.cudaStreamBeginCapture(s.handle(), cudart.cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
            ArgumentException e;
            try {
                e = assertThrows(ArgumentException.class,
                        () -> GroupedGemm.run(p.x, p.w, p.offsets, p.options(Backend.VENDOR, VendorPath.LOOP), out, s));
            } finally {
                cd.check(cudart.cudaStreamEndCapture(s.handle(), graph), "cudaStreamEndCapture");
                cudart.cudaGraphDestroy(graph);
            }
            assertEquals("backend", e.argument());
        }
    }

    /**
     * The vendor paths with the caller's host copy of the offsets ({@code Options.hostOffsets}, as the demo's vendor MoE
     * layer passes one copy to both projections): no offsets copy of their own, the same results; and under
     * {@link GroupedGemm#DEBUG_CHECK_OFFSETS} a host copy that differs from the device offsets is refused, naming it.
     */
    @Test void vendorPathsTakeTheCallersHostOffsets() {
        Random rnd = new Random(61);
        try (Problem p = new Problem(rnd, 9, 150, 72, 48, DType.BF16, WeightLayout.NK, true, true, true, false)) {
            int[] host = GroupedGemm.offsetsToHost(p.offsets, null);
            assertArrayEquals(p.off, host, "offsetsToHost reads the device offsets");
            for (VendorPath vp : VendorPath.values()) {
                try (Tensor out = Poison.poisoned(GPU, p.dt, p.rows, p.nOut())) {
                    GroupedGemm.Options o = p.options(Backend.VENDOR, vp).withHostOffsets(host);
                    GroupedGemm.run(p.x, p.w, p.offsets, o, out, null);
                    Verdict v = p.check(out, GroupedGemmVerification.roundsBeforeEpilogue(p.x, p.w, p.offsets, o));
                    assertTrue(v.pass(), vp + " with host offsets " + p + ": " + v);
                }
            }
            int[] shifted = host.clone();
            for (int g = 1; g < shifted.length - 1; g++) {
                shifted[g] = Math.max(shifted[g - 1], shifted[g] - 1);  // still a valid routing, not the device's
            }
            assertTrue(!java.util.Arrays.equals(shifted, host), "the shifted routing must differ from the device's");
            // the vendor paths route by the host copy they are given: with the shifted one they compute the shifted
            // routing's result (a path that copied the device offsets instead would compute the original one and fail)
            p.off = shifted;
            for (VendorPath vp : VendorPath.values()) {
                try (Tensor out = Poison.poisoned(GPU, p.dt, p.rows, p.nOut())) {
                    GroupedGemm.Options o = p.options(Backend.VENDOR, vp).withHostOffsets(shifted);
                    GroupedGemm.run(p.x, p.w, p.offsets, o, out, null);
                    Verdict v = p.check(out, GroupedGemmVerification.roundsBeforeEpilogue(p.x, p.w, p.offsets, o));
                    assertTrue(v.pass(), vp + " routed by the host copy " + java.util.Arrays.toString(shifted) + ": " + v);
                }
            }
            p.off = host;
            try (Tensor out = Tensor.empty(GPU, p.dt, p.rows, p.nOut())) {  // and a debug run catches the difference
                SystemProperty.with(GroupedGemm.DEBUG_CHECK_OFFSETS, "true", () -> assertEquals("options.hostOffsets", assertThrows(
                        ArgumentException.class, () -> GroupedGemm.run(p.x, p.w, p.offsets, p.options(Backend.VENDOR, VendorPath.LOOP)
                                .withHostOffsets(shifted), out, null)).argument()));
            }
        }
    }

    @Test void debugModeReportsBadOffsets() {
        try (Problem p = new Problem(new Random(10), 4, 30, 64, 64, DType.F16, WeightLayout.KN, false, false, false, false);
             Tensor bad = Tensor.ofInts(GPU, new int[] {0, 20, 10, 25, 30}, 5); Tensor out = Tensor.empty(GPU, DType.F16, 30, 64)) {
            SystemProperty.with(GroupedGemm.DEBUG_CHECK_OFFSETS, "true", () -> {
                ArgumentException e = assertThrows(ArgumentException.class,
                        () -> GroupedGemm.run(p.x, p.w, bad, p.options(Backend.CUSTOM, VendorPath.LOOP), out, null));
                assertEquals("offsets", e.argument());
            });
        }
    }

    /** The op's new output, the pool primed with poison of its size first ({@link Poison#primePool}): unwritten rows show. */
    private static Tensor primedRun(Problem p) {
        Poison.primePool(GPU, DType.BF16, p.rows, 64);
        return GroupedGemm.run(p.x, p.w, p.offsets, p.options(Backend.AUTO, VendorPath.LOOP));
    }
}
