package dev.gapfill.verify;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.UnsupportedShapeException;
import dev.gapfill.core.testing.GpuTest;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.Bmm;
import dev.gapfill.ops.BmmHeuristics;
import dev.gapfill.ops.BmmShape;
import dev.gapfill.ops.Decision;
import dev.gapfill.ops.reference.BmmReference;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import java.util.Random;
import java.util.function.BiConsumer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Both bmm paths against the fp64 reference on the GPU: random shapes (1, 7, 17, 97 and the regime
 * boundaries of BmmHeuristics), every dtype, both transposes, shared B, outputs poisoned first,
 * caller-supplied outputs on an explicit stream, unaligned views (the kernel's element-load path),
 * and both backends forced.
 *
 * <p>Tolerance: {@code Tolerance.accumulation(dtype, k, growth)} with growth 2 for the tensor-core
 * paths (F16/BF16, both backends) and 1 for F32 FFMA (cuBLAS in its own order). The custom F32
 * kernel sums k in order with fmaf, so it must equal {@link BmmReference#sequentialFmaF32} bit for bit.
 */
@GpuTest
class BmmGpuTest {
    private static final Device GPU = Device.cuda(0);
    private static final DType[] DTYPES = {DType.F16, DType.BF16, DType.F32};

    /** One case: run the op on the GPU, compare every element; returns the decision taken. */
    static Decision check(DType dt, int batch, int m, int n, int k, boolean ta, boolean tb, boolean shared, Backend backend,
                          boolean callerOut, int offset, long seed) {
        Random rnd = new Random(seed);
        long[] aShape = ta ? new long[] {batch, k, m} : new long[] {batch, m, k};
        long[] bInner = tb ? new long[] {n, k} : new long[] {k, n};
        long[] bShape = shared ? bInner : new long[] {batch, bInner[0], bInner[1]};
        Bmm.Options o = Bmm.Options.defaults().transposes(ta, tb).backend(backend);
        long aN = (long) batch * m * k;
        try (Tensor ha = Poison.random(Device.CPU, dt, rnd, aShape); Tensor hb = Poison.random(Device.CPU, dt, rnd, bShape);
             Tensor gaBase = Tensor.empty(GPU, dt, aN + offset); Tensor gb = hb.to(GPU);
             Stream s = Stream.create(GPU)) {
            // A at an element offset: offset > 0 makes its address unaligned for 16-byte loads
            Tensor ga = placeAt(ha, gaBase, offset);
            Decision d = Bmm.decide(ga, gb, o);
            Tensor out;
            if (callerOut) {
                out = Poison.poisoned(GPU, dt, batch, m, n);
                Stream.perThread(GPU).synchronize();  // the poison (and allocation) is ordered on the per-thread stream, s is non-blocking
                Bmm.bmm(ga, gb, out, o, s);
                s.synchronize();
            } else {
                Poison.primePool(GPU, dt, batch, m, n);  // the op's own output then starts as poison, not a stale block
                out = Bmm.bmm(ga, gb, o);
            }
            try (out) {
                BmmReference.Result ref = BmmReference.exact(ha, hb, ta, tb);
                boolean tensorCores = dt != DType.F32;
                Verdict v = Verifier.compare(out, ref.exact(), ref.absSum(), Tolerance.accumulation(dt, k, tensorCores ? 2 : 1), "reference");
                String what = dt + " batch=" + batch + " m=" + m + " n=" + n + " k=" + k + " ta=" + ta + " tb=" + tb + " shared=" + shared
                        + " offset=" + offset + " " + d;
                assertTrue(v.pass(), what + ": " + v);
                if (dt == DType.F32 && d.backend() == Backend.CUSTOM) {
                    double[] seq = BmmReference.sequentialFmaF32(ha, hb, ta, tb);
                    float[] got = out.toFloatArray();
                    for (int i = 0; i < got.length; i++) {
                        assertEquals(Float.floatToRawIntBits((float) seq[i]), Float.floatToRawIntBits(got[i]),
                                what + ": element " + i + " differs from the in-order fmaf sum: " + got[i] + " vs " + seq[i]);
                    }
                }
            }
            return d;
        }
    }

    /** A view of {@code base} (on the GPU) holding {@code host}'s elements from element {@code offset} on. */
    private static Tensor placeAt(Tensor host, Tensor base, int offset) {
        long[] shape = host.shape();
        java.nio.ByteBuffer stage = java.nio.ByteBuffer.allocateDirect((int) (base.byteSize()));
        stage.position(offset * host.dtype().bytes());
        stage.put(host.toRaw()).rewind();  // the bytes after `offset` unused elements (left as zero bytes)
        base.copyFromRaw(stage);
        return base.strided(shape, Tensor.contiguousStrides(shape), offset);
    }

    /**
     * The NN row-chunk entries ({@link BmmHeuristics#fragRows}) and their fallback to the pair loads on B and C views at
     * element offsets 0, 1, 2, 4 and 8 (2 to 16 bytes): chunks of 4 elements need B and C on 8 bytes, chunks of 8 on 16. Shapes and
     * batches that give bmm_frag one and four matrices per warp and bmm_frag32 four and two warps per matrix; every
     * element of the output view against the reference, the output's base poisoned around the view.
     */
    @Test void rowChunkEntriesAndTheirFallbackOnBAndCViews() {
        int guard = 16;  // poisoned elements after C's view
        DeviceInfo info = Gpu.device(GPU).info();
        long w4 = (long) BmmHeuristics.FRAG32_W4_MAX_MATS_PER_SM * info.smCount();
        int[][] cases = {  // batch, m, n, k
            {131, 16, 16, 16}, {(int) (64L * info.smCount() + 3), 12, 12, 10}, {(int) w4, 32, 32, 32}, {(int) w4 + 1, 32, 24, 30}};
        int[][] offsets = {{0, 0}, {1, 0}, {0, 2}, {4, 4}, {8, 8}, {2, 8}, {8, 1}};  // B's and C's, in elements
        int rows = 0;
        int pairs = 0;
        long seed = 1300;
        for (DType dt : new DType[] {DType.F16, DType.BF16}) {
            for (int[] c : cases) {
                for (int[] off : offsets) {
                    int bOff = off[0];
                    int cOff = off[1];
                    int batch = c[0], m = c[1], n = c[2], k = c[3];
                    Random rnd = new Random(seed++);
                    try (Tensor ha = Poison.random(Device.CPU, dt, rnd, batch, m, k); Tensor hb = Poison.random(Device.CPU, dt, rnd, batch, k, n);
                         Tensor ga = ha.to(GPU); Tensor gbBase = Tensor.empty(GPU, dt, (long) batch * k * n + bOff);
                         Tensor outBase = Poison.poisoned(GPU, dt, (long) batch * m * n + cOff + guard)) {
                        Tensor gb = placeAt(hb, gbBase, bOff);
                        Tensor out = outBase.strided(new long[] {batch, m, n}, Tensor.contiguousStrides(new long[] {batch, m, n}), cOff);
                        Bmm.Options o = Bmm.Options.defaults().backend(Backend.CUSTOM);
                        Decision d = Bmm.decide(ga, gb, out, o);
                        Stream.perThread(GPU).synchronize();
                        Bmm.bmm(ga, gb, out, o, null);
                        Stream.perThread(GPU).synchronize();
                        BmmShape s = BmmShape.of(dt, batch, m, n, k);
                        int slice = Math.max(m, Math.max(n, k)) <= BmmHeuristics.FRAG_MAX_DIM ? 16
                                : BmmHeuristics.frag32SliceColumns(BmmHeuristics.frag32Plan(s, info).warpsPerMatrix());
                        boolean chunks = BmmHeuristics.fragRows(s, slice, gb.address(), out.address());
                        rows += chunks ? 1 : 0;
                        pairs += chunks ? 0 : 1;
                        BmmReference.Result ref = BmmReference.exact(ha, hb, false, false);
                        Verdict v = Verifier.compare(out, ref.exact(), ref.absSum(), Tolerance.accumulation(dt, k, 2), "reference");
                        assertTrue(v.pass(), dt + " " + s + " B+" + bOff + " C+" + cOff + " " + d + (chunks ? " (row chunks)" : " (pairs)") + ": " + v);
                        assertTrue(d.variant().startsWith(Math.max(m, Math.max(n, k)) <= BmmHeuristics.FRAG_MAX_DIM ? "frag_" : "frag32_"),
                                s + ": " + d);
                        byte[] raw = new byte[(int) outBase.byteSize()];
                        outBase.toRaw().get(raw);
                        long viewEnd = ((long) cOff + (long) batch * m * n) * dt.bytes();
                        for (int e = 0; e < raw.length; e++) {  // nothing written before or after the view: the poison's bytes
                            if (e < cOff * dt.bytes() || e >= viewEnd) {
                                assertEquals((byte) Poison.byteOf(dt), raw[e], s + " C+" + cOff + ": byte " + e + " outside the view was written");
                            }
                        }
                    }
                }
            }
        }
        assertTrue(rows >= 8 && pairs >= 8, "row-chunk launches " + rows + ", pair-load launches " + pairs);
    }

    @Provide
    Arbitrary<Integer> dim() {
        return Arbitraries.oneOf(Arbitraries.of(1, 7, 8, 16, 17, 32, 33, 48, 49, 64, 97, 128), Arbitraries.integers().between(1, 128));
    }

    @Property(tries = 120)
    void randomShapesBothBackends(@ForAll("dim") int m, @ForAll("dim") int n, @ForAll("dim") int k,
                                  @ForAll @IntRange(min = 1, max = 600) int batch, @ForAll @IntRange(min = 0, max = 2) int dt,
                                  @ForAll boolean ta, @ForAll boolean tb, @ForAll boolean shared,
                                  @ForAll @IntRange(min = 0, max = 2) int backend, @ForAll boolean callerOut,
                                  @ForAll @IntRange(min = 0, max = 1) int offset, @ForAll long seed) {
        int b = (int) Math.max(1, Math.min(batch, 4_000_000L / ((long) m * n * k)));  // keeps the CPU reference short
        Backend be = new Backend[] {Backend.CUSTOM, Backend.VENDOR, Backend.AUTO}[backend];
        Decision d = check(DTYPES[dt], b, m, n, k, ta, tb, shared, be, callerOut, offset, seed);
        if (be != Backend.AUTO) {
            assertEquals(be, d.backend());
        }
    }

    @Provide
    Arbitrary<Integer> quad() {  // multiples of 4 up to 128, biased to the sizes bmm_wg takes (above 64)
        return Arbitraries.oneOf(Arbitraries.integers().between(17, 32).map(x -> 4 * x), Arbitraries.integers().between(1, 32).map(x -> 4 * x));
    }

    /**
     * bmm_wg's shapes at random: m, n, k multiples of 4 (rows in 8-byte multiples, 16-byte ones where they are multiples
     * of 8), every layout, 1 to 300 matrices, CUSTOM forced or AUTO, a caller's output on its own stream or a new one.
     * On compute capability 9.0 every shape {@link BmmHeuristics#useWg} takes must run bmm_wg; elsewhere (and for the
     * shapes it does not take) the team kernels or cuBLAS run, checked the same way.
     */
    @Property(tries = 40)
    void wgRandomShapes(@ForAll("quad") int m, @ForAll("quad") int n, @ForAll("quad") int k, @ForAll @IntRange(min = 1, max = 300) int batch,
                        @ForAll boolean bf16, @ForAll boolean ta, @ForAll boolean tb, @ForAll boolean auto, @ForAll boolean callerOut,
                        @ForAll long seed) {
        DType dt = bf16 ? DType.BF16 : DType.F16;
        int b = (int) Math.max(1, Math.min(batch, 60_000_000L / ((long) m * n * k)));  // keeps the CPU reference short
        BmmShape s = BmmShape.of(dt, b, m, n, k).withTransposes(ta, tb);
        DeviceInfo info = Gpu.device(GPU).info();
        Decision d = check(dt, b, m, n, k, ta, tb, false, auto ? Backend.AUTO : Backend.CUSTOM, callerOut, 0, seed);
        if (!auto) {
            assertEquals(BmmHeuristics.useWg(s, info, 16), d.variant().startsWith("wg_"), s + " " + d);
        }
    }

    /** The boundaries of BmmHeuristics' rules, both sides, both backends forced and AUTO. */
    @Test void regimeBoundaries() {
        int[][] shapes = {{32, 32, 32, 2048}, {33, 32, 32, 2048}, {48, 48, 48, 1024}, {48, 48, 48, 1025}, {64, 64, 64, 512},
                          {64, 64, 64, 513}, {49, 48, 48, 64}, {128, 128, 128, 17}, {17, 33, 9, 2048}, {1, 64, 64, 700}, {64, 1, 64, 700}};
        long seed = 11;
        for (int[] s : shapes) {
            for (DType dt : DTYPES) {
                for (Backend be : new Backend[] {Backend.CUSTOM, Backend.VENDOR, Backend.AUTO}) {
                    check(dt, s[3], s[0], s[1], s[2], false, false, false, be, be == Backend.AUTO, 0, seed++);
                }
            }
        }
    }

    /**
     * bmm_team (BmmHeuristics.useTeam): its boundaries, every layout, a partial last group, and the
     * alignment rule (A one element off its allocation: bmm_small runs, or the vendor for rule 4b).
     */
    @Test void teamKernelShapesLayoutsAndAlignment() {
        long seed = 300;
        DeviceInfo info = Gpu.device(GPU).info();
        int[][] shapes = {{32, 32, 32, 2047}, {24, 40, 8, 2049}, {17, 24, 32, 2051}, {16, 16, 16, 2048}, {40, 8, 48, 2050},
                          {1, 64, 64, 2048}};  // 32³ at 2048 is in regimeBoundaries
        for (int[] sh : shapes) {
            for (DType dt : DTYPES) {
                for (Backend be : new Backend[] {Backend.CUSTOM, Backend.AUTO}) {
                    Decision d = check(dt, sh[3], sh[0], sh[1], sh[2], false, false, false, be, be == Backend.AUTO, 0, seed++);
                    BmmShape s = BmmShape.of(dt, sh[3], sh[0], sh[1], sh[2]);
                    if (d.backend() == Backend.CUSTOM) {  // bmm_gemv takes m = 1 first where it takes the tensors
                        boolean gemv = BmmHeuristics.useGemv(s, info, 16);
                        assertEquals(!gemv && BmmHeuristics.useTeam(s, info), d.variant().startsWith("team_"), s + " " + d);
                        assertEquals(gemv, d.variant().startsWith("gemv_"), s + " " + d);
                    }
                }
            }
        }
        for (DType dt : DTYPES) {
            for (int t = 0; t < 4; t++) {
                boolean ta = (t & 2) != 0;
                boolean tb = (t & 1) != 0;
                // F16/BF16 run bmm_frag32 there, aligned or not (BmmHeuristics.useFrag32)
                Decision aligned = check(dt, 2053, 24, 16, 32, ta, tb, false, Backend.CUSTOM, true, 0, seed++);
                assertTrue(aligned.variant().startsWith(dt == DType.F32 ? "team_" : "frag32_"), aligned.toString());
                Decision unaligned = check(dt, 2053, 24, 16, 32, ta, tb, false, Backend.CUSTOM, false, 1, seed++);
                assertTrue(unaligned.variant().startsWith(dt == DType.F32 ? "small_" : "frag32_"), unaligned.toString());
            }
            Decision rowAuto = check(dt, 2048, 1, 64, 64, false, false, false, Backend.AUTO, false, 1, seed++);
            if (dt == DType.F32) {
                assertEquals(Backend.VENDOR, rowAuto.backend(), "rule 4b needs the team kernel, which needs alignment: " + rowAuto);
            }
        }
    }

    /**
     * bmm_gemv (m = 1 or n = 1, {@link BmmHeuristics#useGemv}): both storage forms and all three kernels (dot_lane,
     * axpy_lane, axpy_warp), every layout with and without a shared B, matrix rows of 1 to 16 chunks of 16 bytes (the
     * warp kernel's powers of two and others), m = n = 1, a single matrix, partial last blocks and warps, a caller's
     * output on its own stream every other case; CUSTOM forced, then AUTO on shapes it sends to bmm_gemv. F32 must equal
     * the in-order fmaf sum bit for bit ({@link #check}). A one element off its allocation: another kernel runs.
     */
    @Test void gemvKernelShapesLayoutsAndBatches() {
        long seed = 1700;
        DeviceInfo info = Gpu.device(GPU).info();
        int[][] shapes = {{1, 64, 64}, {64, 1, 64}, {1, 128, 128}, {128, 1, 128}, {1, 48, 40}, {40, 1, 48}, {1, 24, 64}, {17, 1, 32},
                          {1, 1, 64}, {1, 8, 128}, {128, 1, 8}, {1, 32, 17}, {1, 16, 64}, {64, 1, 1}};
        long[] batches = {1, 9, 131, 2051};
        java.util.Set<String> kernels = new java.util.TreeSet<>();
        everyLayout(DTYPES, shapes, batches, seed, false, (s, d) -> {
            assertEquals(BmmHeuristics.useGemv(s, info, 16), d.variant().startsWith("gemv_"), s + " " + d);
            if (d.variant().startsWith("gemv_")) {
                kernels.add(s.dtype() + " " + BmmHeuristics.gemvPlan(s).kind());
            }
        });
        seed += 1000;
        for (DType dt : DTYPES) {
            Decision off = check(dt, 131, 64, 1, 64, false, false, false, Backend.CUSTOM, false, 1, seed++);
            assertTrue(!off.variant().startsWith("gemv_"), "A off 16 bytes: " + off);
        }
        assertEquals(java.util.Set.of("BF16 axpy_lane", "BF16 axpy_warp", "BF16 dot_lane", "F16 axpy_lane", "F16 axpy_warp", "F16 dot_lane",
                "F32 axpy_lane", "F32 dot_lane"), kernels);
        for (DType dt : new DType[] {DType.F16, DType.BF16}) {
            // rule 2b (n = 1) and rule 3's custom shapes with m = 1
            for (int[] sh : new int[][] {{64, 1, 64, 2048}, {32, 1, 32, 600}, {48, 1, 48, 8193}, {1, 32, 32, 600}, {1, 48, 40, 2051}}) {
                Decision d = check(dt, sh[3], sh[0], sh[1], sh[2], false, false, false, Backend.AUTO, true, 0, seed++);
                assertTrue(d.variant().startsWith("gemv_"), dt + " " + java.util.Arrays.toString(sh) + " " + d);
            }
        }
    }

    /**
     * The vendor path reduces F16/BF16 split-K partials in fp32 (VendorHandles.CUBLAS_MATH_MODE, set on every call). The
     * two shapes jqwik shrank to on an H200, where cuBLAS's default (partials reduced in the output type) came back outside
     * the tolerance (record at 190f262: BF16, shared B, batch 6, m = 1, n = 8 and 112, k = 10 and 30), now pass forced
     * VENDOR in every dtype, over several inputs; and the handle still says so after the calls.
     */
    @Test void vendorPathReducesSplitKPartialsInFp32() {
        long seed = 1700;
        int[][] shapes = {{1, 8, 10}, {1, 112, 30}, {3, 64, 2048}};
        for (DType dt : DTYPES) {
            for (int[] sh : shapes) {
                for (int r = 0; r < 4; r++) {
                    Decision d = check(dt, 6, sh[0], sh[1], sh[2], false, false, true, Backend.VENDOR, r % 2 == 1, 0, seed++);
                    assertEquals(Backend.VENDOR, d.backend());
                }
            }
        }
        int[] mode = {-1};
        assertEquals(0, org.bytedeco.cuda.global.cublas.cublasGetMathMode(dev.gapfill.core.VendorHandles.cublas(Stream.perThread(GPU)), mode));
        assertEquals(dev.gapfill.core.VendorHandles.CUBLAS_MATH_MODE, mode[0]);
    }

    /**
     * bmm_team for F16/BF16 above 32 (forced CUSTOM; BmmHeuristics.halfMidTeam): every team width of its plan (1, 2, 4 and
     * 8 warps, 2 stages), partial 32×32 warp tiles and k16 steps, every layout, a partial last block, A one element off its allocation
     * (bmm_small runs) and a shared B (bmm_small). Above 96 at small batches (the rule takes any batch there), up to 96 at
     * batch 2049 (the rule starts at 2048), where the CPU reference costs most, so in fewer layouts.
     */
    @Test void teamKernelHalfMidSizesEveryWidthAndLayout() {
        long seed = 1300;
        DeviceInfo info = Gpu.device(GPU).info();
        java.util.Set<String> widths = new java.util.TreeSet<>();
        // u = 16 (w8), 8 (w8, one tile a warp), 12 (w8, warps with one and two tiles); 100: rows not 16-byte multiples
        int[][] large = {{120, 128, 96}, {128, 40, 104}, {96, 112, 80}, {97, 100, 128}};
        int[] batches = {5, 131, 2 * info.smCount() + 1};
        for (DType dt : new DType[] {DType.F16, DType.BF16}) {
            for (int i = 0; i < large.length; i++) {
                int[] sh = large[i];
                for (int t = 0; t < 8; t++) {
                    boolean ta = (t & 1) != 0, tb = (t & 2) != 0, shared = (t & 4) != 0;
                    int b = batches[(i + t) % batches.length];
                    int offset = t == 3 ? 1 : 0;
                    BmmShape s = BmmShape.of(dt, b, sh[0], sh[1], sh[2]).withTransposes(ta, tb).withSharedB(shared);
                    Decision d = check(dt, b, sh[0], sh[1], sh[2], ta, tb, shared, Backend.CUSTOM, t % 2 == 0, offset, seed++);
                    boolean team = offset == 0 && BmmHeuristics.useTeam(s, info);
                    assertTrue(d.variant().startsWith(expectedTeamKind(s, info, offset)), s + " offset " + offset + " " + d);
                    if (team && d.variant().startsWith("team_")) {  // on sm_90, bmm_wg takes u >= 9 (wgKernelShapesLayoutsAndBatches)
                        widths.add(d.variant());
                    }
                }
            }
            // m, n, k, batch: u = 4 (w4), 4, 4 (n = 33: small), 1 (w1), 2 (w2), and u = 4 with two warps each holding two
            // warp tiles (m, n, k <= 48 at 24 or more matrices per SM on a GPU of up to 170 SMs)
            int[][] mid = {{48, 48, 48, 2049}, {40, 56, 72, 2049}, {64, 33, 40, 2049}, {32, 32, 96, 2049}, {48, 32, 72, 2049},
                    {40, 48, 40, 4099}};
            for (int i = 0; i < mid.length; i++) {
                int[] sh = mid[i];
                for (int t = 0; t < 4; t += dt == DType.F16 ? 1 : 3) {
                    boolean ta = (t & 1) != 0, tb = (t & 2) != 0;
                    BmmShape s = BmmShape.of(dt, sh[3], sh[0], sh[1], sh[2]).withTransposes(ta, tb);
                    Decision d = check(dt, sh[3], sh[0], sh[1], sh[2], ta, tb, false, Backend.CUSTOM, t == 1, 0, seed++);
                    boolean team = BmmHeuristics.useTeam(s, info);
                    assertTrue(d.variant().startsWith(expectedTeamKind(s, info, 0)), s + " " + d);
                    if (team && sh[3] >= (long) BmmHeuristics.HALF_TEAM_W2_MIN_MATS_PER_SM * info.smCount()
                            && Math.max(sh[0], Math.max(sh[1], sh[2])) <= BmmHeuristics.HALF_TEAM_W2_MAX_DIM
                            && (sh[0] + 31) / 32 * ((sh[1] + 31) / 32) == 4) {
                        assertTrue(d.variant().startsWith("team_mma_w2_"), s + " " + d);
                    }
                    if (team && d.variant().startsWith("team_")) {  // on sm_90, bmm_wg takes u >= 9 (wgKernelShapesLayoutsAndBatches)
                        widths.add(d.variant());
                    }
                }
            }
        }
        if (info.smemPerBlockOptin() >= 174_080) {
            assertEquals(java.util.Set.of("team_mma_w1_g1_s2_sc", "team_mma_w2_g1_s2_sc", "team_mma_w4_g1_s2_sc", "team_mma_w8_g1_s2_sc"),
                    widths, widths.toString());
        }
        // bmm_team8: rows in 8-byte, not 16-byte, multiples (m, n, k % 4 == 0), every layout for F16; and 16-byte rows with
        // A 4 elements (8 bytes) off its allocation. m, n, k, batch, offset of A: u = 4 (w4) from batch 512, u = 12 and 8
        // (w8) above 96 at small batches (the rule takes any batch there), so the CPU reference stays cheap
        java.util.Set<String> eight = new java.util.TreeSet<>();
        int[][] team8 = {{36, 44, 52, 513, 0}, {40, 36, 28, 515, 0}, {100, 92, 76, 37, 0}, {124, 36, 100, 21, 0}, {112, 64, 64, 19, 4}};
        for (DType dt : new DType[] {DType.F16, DType.BF16}) {
            for (int[] sh : team8) {
                for (int t = 0; t < 4; t += dt == DType.F16 ? 1 : 3) {
                    boolean ta = (t & 1) != 0, tb = (t & 2) != 0;
                    BmmShape s = BmmShape.of(dt, sh[3], sh[0], sh[1], sh[2]).withTransposes(ta, tb);
                    Decision d = check(dt, sh[3], sh[0], sh[1], sh[2], ta, tb, false, Backend.CUSTOM, t == 2, sh[4], seed++);
                    assertTrue(d.variant().startsWith(expectedTeamKind(s, info, sh[4])), s + " offset " + sh[4] + " " + d);
                    if (d.variant().startsWith("team8_")) {
                        eight.add(d.variant());
                    }
                }
            }
        }
        if (info.smemPerBlockOptin() >= 174_080) {
            assertTrue(eight.containsAll(java.util.Set.of("team8_mma_w4_g1_s2_sc", "team8_mma_w8_g1_s2_sc")), eight.toString());
        }
    }

    /**
     * bmm_wg (wgmma, compute capability 9.0 only): 8-byte and 16-byte rows with at least 9 warp tiles (6 for 8-byte rows:
     * 124×36×60 and 36×124×100 at u = 8, where m ≤ 64 leaves the second warpgroup without rows, and 76×60×36 at u = 6), every layout, a
     * batch of one matrix, of fewer matrices than blocks, and of more (each block walks several, so the k padding that C's
     * staging overwrites must come back as zeros: k = 36, 44, 80, 100 leave 12, 4, 0, 12 padding columns), callers'
     * outputs on their own stream; then the same shapes with A 8 bytes off its allocation, which bmm_wg does not take.
     * Elsewhere the shapes run the team kernels and are checked the same way.
     */
    @Test void wgKernelShapesLayoutsAndBatches() {
        long seed = 2700;
        DeviceInfo info = Gpu.device(GPU).info();
        boolean hopper = info.cc() == 90;
        int[][] shapes = {{100, 100, 100}, {68, 124, 100}, {128, 128, 128}, {96, 112, 80}, {100, 100, 36}, {72, 68, 44}, {124, 36, 60},
                {36, 124, 100},  // m <= 64: the second warpgroup computes nothing
                {76, 60, 36}};   // u = 6 with 8-byte rows
        int[] batches = {1, 7, 2 * info.smCount() + 3};
        int wg = 0;
        for (DType dt : new DType[] {DType.F16, DType.BF16}) {
            for (int i = 0; i < shapes.length; i++) {
                int[] sh = shapes[i];
                for (int t = 0; t < 4; t++) {
                    boolean ta = (t & 1) != 0, tb = (t & 2) != 0;
                    int b = batches[(i + t) % batches.length];
                    BmmShape s = BmmShape.of(dt, b, sh[0], sh[1], sh[2]).withTransposes(ta, tb);
                    Decision d = check(dt, b, sh[0], sh[1], sh[2], ta, tb, false, Backend.CUSTOM, t % 2 == 1, 0, seed++);
                    assertEquals(hopper, d.variant().startsWith("wg_"), s + " " + d);
                    wg += d.variant().startsWith("wg_") ? 1 : 0;
                    if (t == 0) {  // A 8 bytes off: not bmm_wg's
                        Decision off = check(dt, b, sh[0], sh[1], sh[2], false, false, false, Backend.CUSTOM, false, 4, seed++);
                        assertTrue(!off.variant().startsWith("wg_"), s + " offset 4 " + off);
                    }
                }
            }
            // AUTO on 8-byte rows from batch 512 (rule 3c), 16-byte rows with cuBLAS
            Decision auto = check(dt, 513, 100, 100, 36, false, false, false, Backend.AUTO, true, 0, seed++);
            assertEquals(hopper ? "wg_mma_t256" : BmmHeuristics.decide(BmmShape.of(dt, 513, 100, 100, 36), info, 16).variant(), auto.variant());
        }
        assertEquals(hopper ? 2 * 4 * shapes.length : 0, wg);
    }

    /** The custom kernel forced CUSTOM should run: bmm_wg on sm_90 from 9 warp tiles, bmm_team on 16-byte rows and pointers, bmm_team8 on 8-byte, else bmm_small. */
    private static String expectedTeamKind(BmmShape s, DeviceInfo info, int offsetElements) {
        long off = (long) offsetElements * s.dtype().bytes();
        int align = off % 16 == 0 ? 16 : off % 8 == 0 ? 8 : 0;
        if (BmmHeuristics.useWg(s, info, align)) {
            return "wg_mma_";
        }
        if (align == 16 && BmmHeuristics.useTeam(s, info)) {
            return "team_mma_";
        }
        return BmmHeuristics.useTeam8(s, info, align) ? "team8_mma_" : "small_";
    }

    /**
     * F16 and BF16, each shape in each layout (t: bit 0 Aᵀ, bit 1 Bᵀ, bit 2 shared B), CUSTOM forced, through {@link #check}:
     * the batch cycles through {@code batches}, a caller's output on its own stream every other case, A one element off
     * its allocation every third; {@code then} gets the shape and the decision taken.
     */
    private static void everyHalfLayout(int[][] shapes, long[] batches, long seed, BiConsumer<BmmShape, Decision> then) {
        everyLayout(new DType[] {DType.F16, DType.BF16}, shapes, batches, seed, true, then);
    }

    /** As {@link #everyHalfLayout} for {@code dtypes}; {@code offsets}: A one element off its allocation every third case. */
    private static void everyLayout(DType[] dtypes, int[][] shapes, long[] batches, long seed, boolean offsets,
                                    BiConsumer<BmmShape, Decision> then) {
        for (DType dt : dtypes) {
            for (int i = 0; i < shapes.length; i++) {
                int[] sh = shapes[i];
                for (int t = 0; t < 8; t++) {
                    boolean ta = (t & 1) != 0, tb = (t & 2) != 0, shared = (t & 4) != 0;
                    int b = (int) batches[(i + t) % batches.length];
                    BmmShape s = BmmShape.of(dt, b, sh[0], sh[1], sh[2]).withTransposes(ta, tb).withSharedB(shared);
                    int offset = offsets && t % 3 == 0 ? 1 : 0;
                    then.accept(s, check(dt, b, sh[0], sh[1], sh[2], ta, tb, shared, Backend.CUSTOM, t % 2 == 0, offset, seed++));
                }
            }
        }
    }

    /**
     * bmm_frag (F16/BF16, m, n, k ≤ 16, even row lengths): each 8-block present or absent, edges inside a block, every
     * layout, shared B, A one element off its allocation (element loads), and batches that give 1 and 4 matrices per
     * warp with a partial last warp and block; odd row lengths go to bmm_small. NN with n = 12 or 16 and B, C on 8 bytes
     * launches the row-chunk entry (BmmHeuristics.fragRows), the other shapes and layouts the pair loads.
     */
    @Test void fragKernelShapesLayoutsOffsetsAndMatricesPerWarp() {
        long seed = 500;
        DeviceInfo info = Gpu.device(GPU).info();
        int[][] shapes = {{8, 8, 8}, {16, 16, 16}, {10, 14, 6}, {16, 8, 16}, {2, 16, 2}, {14, 2, 4}, {12, 12, 10}, {6, 12, 16}};
        long[] batches = {5, 131, 32L * info.smCount() + 37, 64L * info.smCount() + 3};
        everyHalfLayout(shapes, batches, seed, (s, d) -> assertTrue(d.variant().startsWith("frag_"), s + " " + d));
        seed += 1000;
        for (DType dt : new DType[] {DType.F16, DType.BF16}) {
            for (long b : batches) {  // each matrices-per-warp count on the sweep's shape
                check(dt, (int) b, 8, 8, 8, false, false, false, Backend.CUSTOM, false, 0, seed++);
            }
            Decision odd = check(dt, 131, 9, 15, 7, false, false, false, Backend.CUSTOM, true, 0, seed++);
            assertTrue(odd.variant().startsWith("small_"), odd.toString());
        }
    }

    /**
     * bmm_frag32 (F16/BF16, 16 < max(m, n, k) ≤ 32, even row lengths, B per matrix): partial m16, n8 and k16 tiles, a
     * second warp with no rows or columns of its own, every layout (shapes whose stored rows turn odd under a transpose go
     * to bmm_small; a shared B too), A one element off its allocation (element loads), a caller's output on its own
     * stream, and batches that give four and two warps per matrix with a partial last block; AUTO takes the same kernel.
     */
    @Test void frag32KernelShapesLayoutsOffsetsAndWarpsPerMatrix() {
        long seed = 900;
        DeviceInfo info = Gpu.device(GPU).info();
        int[][] shapes = {{32, 32, 32}, {24, 32, 18}, {32, 20, 30}, {31, 18, 26}, {18, 26, 32}, {32, 8, 32}, {2, 32, 32},
                          {20, 12, 24}, {10, 22, 4}, {17, 24, 10}};
        long w4 = (long) BmmHeuristics.FRAG32_W4_MAX_MATS_PER_SM * info.smCount();
        long[] batches = {5, 131, w4, w4 + 1, 2051};
        int[] frag32Runs = {0};
        everyHalfLayout(shapes, batches, seed, (s, d) -> {
            if (BmmHeuristics.useFrag32(s)) {
                assertEquals("frag32_mma_w" + BmmHeuristics.frag32Plan(s, info).warpsPerMatrix() + "_t128", d.variant(), s.toString());
                frag32Runs[0]++;
            } else {
                assertTrue(d.variant().startsWith("small_"), s + " " + d);
            }
        });
        seed += 1000;
        for (DType dt : new DType[] {DType.F16, DType.BF16}) {
            for (long b : batches) {  // each warps-per-matrix count on the sweep's shape, through AUTO
                Decision d = check(dt, (int) b, 32, 32, 32, false, false, false, Backend.AUTO, false, 0, seed++);
                assertTrue(d.variant().startsWith("frag32_"), d.toString());
            }
        }
        assertTrue(frag32Runs[0] >= 60, "bmm_frag32 ran on " + frag32Runs[0] + " of the forced cases");
    }

    /**
     * bmm_frag's F32 kernels (m, n, k ≤ 16, A and B as stored): both variants (s8: m, n, k ≤ 8; s16), each 8-block of
     * rows, columns and k present or absent, odd sizes (element loads), shared B, A one element off its allocation, a
     * caller's output on its own stream, and batches that give one and two matrices per warp with a partial last warp
     * and block; the results equal the in-order fmaf sum bit for bit ({@link #check}). AUTO takes the same kernel.
     */
    @Test void f32FragKernelShapesOffsetsAndMatricesPerWarp() {
        long seed = 700;
        DeviceInfo info = Gpu.device(GPU).info();
        int[][] shapes = {{8, 8, 8}, {16, 16, 16}, {9, 15, 7}, {16, 8, 16}, {8, 16, 8}, {3, 11, 16}, {13, 1, 2}, {1, 16, 1}, {5, 6, 3}};
        long[] batches = {5, 131, 32L * info.smCount() + 37, 64L * info.smCount() + 3};
        for (int i = 0; i < shapes.length; i++) {
            int[] sh = shapes[i];
            for (int t = 0; t < 4; t++) {
                boolean shared = (t & 1) != 0;
                int offset = (t & 2) != 0 ? 1 : 0;
                int b = (int) batches[(i + t) % batches.length];
                Decision d = check(DType.F32, b, sh[0], sh[1], sh[2], false, false, shared, Backend.CUSTOM, t % 3 == 0, offset, seed++);
                assertTrue(d.variant().startsWith("frag_ffma_s" + (Math.max(sh[0], Math.max(sh[1], sh[2])) <= 8 ? "8_" : "16_")), d.toString());
            }
        }
        for (long b : batches) {  // each matrices-per-warp count at 8³ and 16³, through AUTO
            for (int n : new int[] {8, 16}) {
                Decision d = check(DType.F32, (int) b, n, n, n, false, false, false, Backend.AUTO, false, 0, seed++);
                assertTrue(d.variant().startsWith("frag_ffma_"), d.toString());
            }
        }
    }

    @Test void allLayoutsAndSharedBAtOddSizes() {
        long seed = 100;
        for (DType dt : DTYPES) {
            for (int t = 0; t < 4; t++) {
                for (boolean shared : new boolean[] {false, true}) {
                    for (Backend be : new Backend[] {Backend.CUSTOM, Backend.VENDOR}) {
                        check(dt, 37, 17, 97, 7, (t & 2) != 0, (t & 1) != 0, shared, be, true, t & 1, seed++);
                        check(dt, 5, 1, 1, 1, (t & 2) != 0, (t & 1) != 0, shared, be, false, 0, seed++);
                    }
                }
            }
        }
    }

    @Test void aboveTheCustomLimitAutoIsVendorAndCustomIsRefused() {
        assertEquals(Backend.VENDOR, check(DType.F16, 3, 129, 40, 200, false, true, false, Backend.AUTO, true, 0, 5).backend());
        try (Tensor a = Tensor.empty(GPU, DType.F16, 2, 16, 129); Tensor b = Tensor.empty(GPU, DType.F16, 2, 129, 16)) {
            assertThrows(UnsupportedShapeException.class, () -> Bmm.bmm(a, b, Bmm.Options.defaults().backend(Backend.CUSTOM)));
        }
    }

    /**
     * TF32 (opt-in) on the vendor path: inputs are rounded to 10 mantissa bits (u_tf32 = 2^-11, 2^-10 if
     * truncated), so each product carries up to 2·2^-10 relative error on top of fp32 accumulation.
     */
    @Test void tf32IsWithinTheTf32Bound() {
        int batch = 64;
        int m = 40;
        int n = 72;
        int k = 100;
        Random rnd = new Random(3);
        try (Tensor ha = Poison.random(Device.CPU, DType.F32, rnd, batch, m, k); Tensor hb = Poison.random(Device.CPU, DType.F32, rnd, batch, k, n);
             Tensor ga = ha.to(GPU); Tensor gb = hb.to(GPU);
             Tensor out = primed(DType.F32, batch * (long) m * n, () -> Bmm.bmm(ga, gb, Bmm.Options.defaults().tf32().backend(Backend.VENDOR)))) {
            BmmReference.Result ref = BmmReference.exact(ha, hb, false, false);
            double gamma = k * 0x1p-24 / (1 - k * 0x1p-24);
            // |tf32(a)·tf32(b) − a·b| ≤ (2·2^-10 + 2^-20)|a·b|; fp32 accumulation of those products ≤ γ_k·(1 + 2^-9)·Σ|a·b|
            Tolerance tf32 = new Tolerance(Tolerance.Kind.ACCUMULATION, 0, DType.F32.unitRoundoff(),
                    2 * 0x1p-10 + 0x1p-20 + gamma * (1 + 0x1p-9));
            Verdict v = Verifier.compare(out, ref.exact(), ref.absSum(), tf32, "reference");
            assertTrue(v.pass(), v.toString());
        }
    }

    @Test void sameInputsGiveTheSameBitsTwice() {
        Random rnd = new Random(9);
        for (DType dt : DTYPES) {
            try (Tensor ha = Poison.random(Device.CPU, dt, rnd, 300, 24, 40); Tensor hb = Poison.random(Device.CPU, dt, rnd, 300, 40, 16);
                 Tensor ga = ha.to(GPU); Tensor gb = hb.to(GPU);
                 Tensor c1 = Bmm.bmm(ga, gb, Bmm.Options.defaults().backend(Backend.CUSTOM));
                 Tensor c2 = Bmm.bmm(ga, gb, Bmm.Options.defaults().backend(Backend.CUSTOM))) {
                assertArrayEquals(bytes(c1), bytes(c2), dt + ": custom is deterministic");
            }
        }
    }

    @Test void decideMatchesTheHeuristicsForTheDevice() {
        try (Tensor a = Tensor.empty(GPU, DType.F16, 2048, 16, 16); Tensor b = Tensor.empty(GPU, DType.F16, 2048, 16, 16)) {
            Decision d = Bmm.decide(a, b, Bmm.Options.defaults());
            BmmShape s = BmmShape.of(DType.F16, 2048, 16, 16, 16);
            assertEquals(Bmm.decide(s, dev.gapfill.core.Gpu.device(GPU).info(), Backend.AUTO), d);
        }
    }

    private static byte[] bytes(Tensor t) {
        java.nio.ByteBuffer b = t.toRaw();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    /** {@code call}'s new output, with the pool primed with poison of {@code elements} of {@code dt} first ({@link Poison#primePool}). */
    private static Tensor primed(DType dt, long elements, java.util.function.Supplier<Tensor> call) {
        Poison.primePool(GPU, dt, elements);
        return call.get();
    }
}
