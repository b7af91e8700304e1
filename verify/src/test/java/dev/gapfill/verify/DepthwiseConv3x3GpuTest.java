package dev.gapfill.verify;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.GpuTest;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.core.testing.SystemProperty;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.Decision;
import dev.gapfill.ops.DepthwiseConv3x3;
import dev.gapfill.ops.DepthwiseConv3x3Heuristics;
import dev.gapfill.ops.DepthwiseConv3x3.Activation;
import dev.gapfill.ops.DepthwiseConv3x3.Layout;
import dev.gapfill.ops.DepthwiseConv3x3.Options;
import dev.gapfill.ops.DepthwiseConv3x3.Problem;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Arbitrary;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Both backends of DepthwiseConv3x3 against the CPU reference on the GPU: every dtype × layout ×
 * activation × stride over odd sizes (H, W ∈ {1, 7, 17, 97}, C ∈ {1, 3, 8, 13, 64}), bias and residual
 * on and off, outputs poisoned (0xFF = NaN) before every run, caller-supplied outputs, the residual
 * updated in place, unaligned views (the kernels' scalar fallback), and random shapes. CUSTOM is held
 * bit-exact for NONE/RELU/RELU6 and to 1 ulp for SILU/GELU; VENDOR to the accumulation bound of
 * {@link DepthwiseConv3x3Verification#vendor}.
 */
@GpuTest
class DepthwiseConv3x3GpuTest {
    private static final int[] SPATIAL = {1, 7, 17, 97};
    private static final int[] CHANNELS = {1, 3, 8, 13, 64};
    private static final Device GPU = Device.cuda(0);

    /** Runs one problem on one backend into a poisoned caller-supplied output and checks every element. */
    static Verdict runAndCheck(Problem p, Backend backend, Random rnd, int misalign, boolean residualInPlace) {
        Options o = Options.builder().stride(p.stride()).layout(p.layout()).activation(p.act()).backend(backend).build();
        long[] ys = p.outputShape();
        long ny = p.outputElements();
        try (Tensor hx = Poison.random(Device.CPU, p.dtype(), rnd, p.inputShape());
             Tensor hw = Poison.random(Device.CPU, p.dtype(), rnd, p.c(), 3, 3);
             Tensor hb = p.bias() ? Poison.random(Device.CPU, p.dtype(), rnd, p.c()) : null;
             Tensor hr = p.residual() ? Poison.random(Device.CPU, p.dtype(), rnd, ys) : null;
             Tensor gx = hx.to(GPU); Tensor gw = hw.to(GPU); Tensor gb = hb == null ? null : hb.to(GPU);
             Tensor outBuf = Poison.poisoned(GPU, p.dtype(), ny + misalign);
             Tensor gr = hr == null || residualInPlace ? null : hr.to(GPU);
             Stream s = Stream.create(GPU)) {
            Tensor y = outBuf.strided(ys, Tensor.contiguousStrides(ys), misalign);
            Tensor res = gr;
            if (residualInPlace && hr != null) {
                try (Tensor staged = hr.to(GPU)) {
                    byteCopy(staged, y, s);
                }
                res = y;
            }
            DepthwiseConv3x3.apply(gx, gw, gb, res, y, o, s);
            s.synchronize();
            Verdict v = backend == Backend.VENDOR
                    ? DepthwiseConv3x3Verification.checkVendor(y, hx, hw, hb, hr, o)
                    : DepthwiseConv3x3Verification.checkCustom(y, hx, hw, hb, hr, o);
            if (misalign > 0) {
                float[] all = outBuf.toFloatArray();
                for (int i = 0; i < misalign; i++) {
                    assertTrue(Float.isNaN(all[i]), "element before the output view was written");
                }
            }
            return v;
        }
    }

    /** Device-to-device copy of a contiguous tensor into a same-sized contiguous view. */
    private static void byteCopy(Tensor src, Tensor dst, Stream s) {
        dev.gapfill.core.Gpu.device(GPU).check(org.bytedeco.cuda.global.cudart.cudaMemcpyAsync(
                new dev.gapfill.core.DevicePointer(dst.address()), new dev.gapfill.core.DevicePointer(src.address()), dst.byteSize(),
                org.bytedeco.cuda.global.cudart.cudaMemcpyDeviceToDevice, s.handle()), "cudaMemcpyAsync(test residual)");
        s.synchronize();
    }

    /** The odd-size grid: each (dtype, layout, stride, activation) meets every H, W and C value and all four bias/residual combinations. */
    private static List<String> sweep(Backend backend) {
        List<String> failures = new ArrayList<>();
        Random rnd = new Random(backend.ordinal() * 7919L + 1);
        int k = 0;
        for (DType dt : new DType[] {DType.F32, DType.F16, DType.BF16}) {
            for (Layout l : Layout.values()) {
                for (int stride = 1; stride <= 2; stride++) {
                    for (Activation act : Activation.values()) {
                        for (int i = 0; i < 5; i++, k++) {
                            int h = SPATIAL[(k + i) % 4];
                            int w = SPATIAL[(k / 4 + 2 * i) % 4];
                            int c = CHANNELS[(k + 3 * i) % 5];
                            Problem p = new Problem(dt, l, 1 + k % 2, c, h, w, stride, act, (k & 1) == 0, (k & 2) == 0);
                            Verdict v = runAndCheck(p, backend, rnd, 0, false);
                            if (!v.pass()) {
                                failures.add(backend + " " + p + ": " + v);
                            }
                        }
                    }
                }
            }
        }
        return failures;
    }

    @Test void customMatchesTheReferenceOnTheOddSizeGrid() {
        List<String> f = sweep(Backend.CUSTOM);
        assertTrue(f.isEmpty(), f.size() + " failures, first: " + (f.isEmpty() ? "" : f.get(0)));
    }

    @Test void vendorIsWithinItsAccumulationBoundOnTheOddSizeGrid() {
        List<String> f = sweep(Backend.VENDOR);
        assertTrue(f.isEmpty(), f.size() + " failures, first: " + (f.isEmpty() ? "" : f.get(0)));
    }

    /**
     * The vendor composition's GELU pass adds the bias itself (since the fiftieth session): its three vector branches
     * (NCHW with H'·W' a multiple of the vector width, one channel per vector; NHWC with C a multiple of it, consecutive
     * channels; anything else, a channel per element) and the scalar path of a misaligned output, every dtype, both
     * GELUs, with and without a residual. The odd-size grid has no NCHW plane whose size is a multiple of 4. The
     * misaligned outputs are also the suite's first VENDOR calls into an output off 16 bytes, with the algorithm cuDNN
     * chose for the aligned call of the same shape (the plan key has no alignment): a cuDNN error there is that
     * finding, not the bias's.
     */
    @Test void vendorGeluAddsTheBiasInItsOwnPassOnEveryBranch() {
        List<String> failures = new ArrayList<>();
        Random rnd = new Random(50);
        int k = 0;
        for (DType dt : new DType[] {DType.F32, DType.F16, DType.BF16}) {
            for (Activation act : new Activation[] {Activation.GELU_ERF, Activation.GELU_TANH}) {
                Problem[] ps = {
                    new Problem(dt, Layout.NCHW, 2, 3, 8, 8, 1, act, true, (k & 1) == 0),     // H'W' = 64: one channel per vector
                    new Problem(dt, Layout.NCHW, 1, 5, 16, 16, 2, act, true, (k & 1) == 1),   // H'W' = 64 after stride 2
                    new Problem(dt, Layout.NHWC, 2, 16, 5, 7, 1, act, true, (k & 1) == 0),    // C = 16: runs of channels
                    new Problem(dt, Layout.NHWC, 1, 13, 6, 6, 1, act, true, (k & 1) == 1),    // C = 13: a channel per element
                    new Problem(dt, Layout.NCHW, 1, 7, 5, 3, 1, act, true, false),            // H'W' = 15: a channel per element
                };
                for (Problem p : ps) {
                    for (int misalign : new int[] {0, 1}) {  // 1: the output view off 16 bytes, the scalar path
                        Verdict v = runAndCheck(p, Backend.VENDOR, rnd, misalign, false);
                        if (!v.pass()) {
                            failures.add(p + " misalign " + misalign + ": " + v);
                        }
                    }
                }
                k++;
            }
        }
        assertTrue(failures.isEmpty(), failures.size() + " failures, first: " + (failures.isEmpty() ? "" : failures.get(0)));
    }

    @Test void unalignedViewsTakeTheScalarPathAndStayBitExact() {
        Random rnd = new Random(11);
        for (DType dt : new DType[] {DType.F32, DType.F16, DType.BF16}) {
            for (Layout l : Layout.values()) {
                for (int stride = 1; stride <= 2; stride++) {
                    // C and W multiples of every vector width, so only the misaligned output forces the scalar path
                    Problem p = new Problem(dt, l, 2, 16, 17, 32, stride, Activation.RELU6, true, true);
                    Verdict v = runAndCheck(p, Backend.CUSTOM, rnd, 1, false);
                    assertTrue(v.pass() && v.bitExact(), p + ": " + v);
                }
            }
        }
    }

    /**
     * Pre-activations far below zero (a residual in [-110, -80]): the logistic factor e^-v overflows fp32
     * there, and v / (1 + inf) = -0 would miss BF16 results such as silu(-90) ≈ -7e-38 that are still
     * representable. Checked for SILU (v in [-95, -80]) and GELU_TANH (v in [-10.2, -9.9]), both layouts,
     * against the reference's 1-ulp rule; every exact result there is a non-zero BF16 number.
     */
    @Test void veryNegativePreActivationsKeepTheirTinyBf16Results() {
        Random rnd = new Random(17);
        for (Activation act : new Activation[] {Activation.SILU, Activation.GELU_TANH}) {
            for (Layout l : Layout.values()) {
                Problem p = new Problem(DType.BF16, l, 1, 16, 9, 16, 1, act, false, true);
                Options o = Options.builder().layout(l).activation(act).backend(Backend.CUSTOM).build();
                long[] ys = p.outputShape();
                float[] r = new float[(int) p.outputElements()];
                for (int i = 0; i < r.length; i++) {
                    r[i] = act == Activation.SILU ? -80f - 15f * rnd.nextFloat() : -9.9f - 0.3f * rnd.nextFloat();
                }
                float[] w = new float[p.c() * 9];  // tiny taps: the pre-activation stays inside the residual's window
                for (int i = 0; i < w.length; i++) {
                    w[i] = (rnd.nextFloat() - 0.5f) * 2e-3f;
                }
                try (Tensor hx = Poison.random(Device.CPU, DType.BF16, rnd, p.inputShape());
                     Tensor hw = Tensor.of(Device.CPU, DType.BF16, w, p.c(), 3, 3);
                     Tensor hr = Tensor.of(Device.CPU, DType.BF16, r, ys);
                     Tensor gx = hx.to(GPU); Tensor gw = hw.to(GPU); Tensor gr = hr.to(GPU);
                     Tensor y = Poison.poisoned(GPU, DType.BF16, ys); Stream s = Stream.create(GPU)) {
                    DepthwiseConv3x3.apply(gx, gw, null, gr, y, o, s);
                    s.synchronize();
                    Verdict v = DepthwiseConv3x3Verification.checkCustom(y, hx, hw, null, hr, o);
                    assertTrue(v.pass(), act + " " + l + ": " + v);
                    float[] out = y.toFloatArray();
                    int nonZero = 0;
                    for (float f : out) {
                        nonZero += f != 0f ? 1 : 0;
                    }
                    assertEquals(out.length, nonZero, act + " " + l + ": only " + nonZero + " of " + out.length + " outputs are non-zero");
                }
            }
        }
    }

    /**
     * SILU, GELU_TANH and GELU_ERF for 16-bit outputs use the fast forms of common/depthwise_conv3x3.cuh (ex2/rcp
     * approximations, an erfc fit; nhwc.cu's stride-2 kernels send |v| ≥ 2^64 to the exact forms). Pre-activations
     * (a residual, tiny taps) spread log-uniformly over ±[1e-6, 6e4] for F16 (the tails of every function, the sign
     * change, F16's largest values) and ±[1e-30, 1e30] for BF16 (past 2^64 into saturation, down to values whose
     * results are BF16 subnormals); every element must stay within the reference's 1-ulp rule, in both layouts,
     * both strides and both 16-bit dtypes. F32 outputs evaluate SILU and GELU_TANH in double-float fp32 arithmetic
     * (f32_smooth_act.cuh) and GELU_ERF in fp64: ±[1e-10, 1e4] spans their working range and both cut-offs.
     */
    @Test void smoothActivationsStayWithinOneUlpAcrossTheirRange() {
        Random rnd = new Random(23);
        for (DType dt : new DType[] {DType.F16, DType.BF16, DType.F32}) {
            for (Activation act : new Activation[] {Activation.SILU, Activation.GELU_TANH, Activation.GELU_ERF}) {
                for (Layout l : Layout.values()) {
                  for (int stride = 1; stride <= 2; stride++) {
                    Problem p = new Problem(dt, l, 2, 24, 17, 32, stride, act, false, true);
                    Options o = Options.builder().layout(l).stride(stride).activation(act).backend(Backend.CUSTOM).build();
                    long[] ys = p.outputShape();
                    float[] r = new float[(int) p.outputElements()];
                    // F32: the double-float forms' whole working range and both of their limits (|a| > 120, 20)
                    double lo = dt == DType.F16 ? 1e-6 : dt == DType.F32 ? 1e-10 : 1e-30;
                    double hi = dt == DType.F16 ? 6e4 : dt == DType.F32 ? 1e4 : 1e30;
                    for (int i = 0; i < r.length; i++) {
                        double mag = Math.exp(Math.log(lo) + rnd.nextDouble() * (Math.log(hi) - Math.log(lo)));
                        r[i] = (float) (rnd.nextBoolean() ? mag : -mag);
                    }
                    float[] w = new float[p.c() * 9];
                    for (int i = 0; i < w.length; i++) {
                        w[i] = (rnd.nextFloat() - 0.5f) * 2e-4f;
                    }
                    try (Tensor hx = Poison.random(Device.CPU, dt, rnd, p.inputShape());
                         Tensor hw = Tensor.of(Device.CPU, dt, w, p.c(), 3, 3);
                         Tensor hr = Tensor.of(Device.CPU, dt, r, ys);
                         Tensor gx = hx.to(GPU); Tensor gw = hw.to(GPU); Tensor gr = hr.to(GPU);
                         Tensor y = Poison.poisoned(GPU, dt, ys); Stream s = Stream.create(GPU)) {
                        DepthwiseConv3x3.apply(gx, gw, null, gr, y, o, s);
                        s.synchronize();
                        Verdict v = DepthwiseConv3x3Verification.checkCustom(y, hx, hw, null, hr, o);
                        assertTrue(v.pass(), dt + " " + act + " " + l + " stride " + stride + ": " + v);
                    }
                  }
                }
            }
        }
    }

    /**
     * Stride-1 NHWC runs the ring kernel (nhwc_ring.cu: F16/BF16 in each of its three thread geometries, F32 in 2 × 4 and
     * 2 × 2, forced by {@code gapfill.depthwise.nhwcRingF32Geometry} and as the rules pick them); with
     * {@code gapfill.depthwise.nhwcRing=false} it runs nhwc.cu's register-pipelined kernel. Both must be bit-exact for RELU6 and within 1 ulp for GELU_ERF on odd
     * and vectorisable channel counts, with and without bias and residual, and the decision must name the kernel.
     */
    @Test void ringSwitchSelectsEitherKernelAndBothMatchTheReference() {
        Random rnd = new Random(29);
        for (String mode : new String[] {"true", "false", "f32c2w2", "rules"}) {
            String ring = mode.equals("false") ? "false" : "true";
            String f32Geometry = mode.equals("f32c2w2") ? "c2w2" : mode.equals("rules") ? "" : "c2w4";
            SystemProperty.with(DepthwiseConv3x3Heuristics.RING_F32_GEOMETRY_PROPERTY, f32Geometry, () -> SystemProperty.with(DepthwiseConv3x3Heuristics.RING_PROPERTY, ring, () -> {
                int k = 0;
                for (DType dt : new DType[] {DType.F16, DType.BF16, DType.F32}) {
                    for (Activation act : new Activation[] {Activation.RELU6, Activation.GELU_ERF}) {
                        for (int c : dt == DType.F32 ? new int[] {12, 136} : new int[] {13, 136}) {
                            Problem p = new Problem(dt, Layout.NHWC, 2, c, 19, 23, 1, act, (k & 1) == 0, (k & 2) == 0);
                            k++;
                            String variant = DepthwiseConv3x3Heuristics.customVariant(p);
                            assertEquals(ring.equals("true"), variant.startsWith("nhwc_ring"), p.toString());
                            // the ring geometries: F16/BF16 2 x 4 for C <= 128, above 4 x 2 (RELU6) or 2 x 2 (GELU); F32 2 x 4
                            // (2 x 2 when forced, and under the rules for these small problems' SiLU/GELU)
                            String f32 = !f32Geometry.isEmpty() ? f32Geometry : act.isExact() ? "c2w4" : "c2w2";
                            String geometry = dt == DType.F32 ? "_" + f32 + "_"
                                    : c <= 128 ? "_c2w4_" : act == Activation.RELU6 ? "_c4w2_" : "_c2w2_";
                            assertTrue(!ring.equals("true") || variant.contains(geometry), p + " " + variant);
                            Verdict v = runAndCheck(p, Backend.CUSTOM, rnd, 0, false);
                            assertTrue(v.pass() && (act != Activation.RELU6 || v.bitExact()), mode + " " + p + ": " + v);
                        }
                    }
                }
            }));
        }
    }

    /**
     * nchw.cu's stride-1 row loop unrolled three times ({@code gapfill.depthwise.nchwUnroll3}): forced on (every
     * activation), off, and under the rule (F16/BF16 exact activations at access width 8), with the plane kernel switched
     * off, on planes whose heights give every remainder of the loop's trip count (rows per strip + 2) modulo 3, F16 and
     * BF16, bias and residual on and off, the residual in place, and an output view one element off (the launch narrows
     * the access and takes the rolled loop); then the kernel the rules pick at the bounds between the plane kernel and
     * nchw.cu, with the output aligned and one element off.
     * Bit-exact against the reference for NONE/RELU/RELU6, within 1 ulp for SiLU/GELU_ERF; the decision names the loop.
     */
    @Test void unrolledNchwLoopMatchesTheReference() {
        Random rnd = new Random(41);
        int[][] shapes = {{1, 4096}, {2, 2048}, {3, 1600}, {5, 800}, {17, 200}, {65, 64}, {9, 400}};
        List<String> failures = new ArrayList<>();
        int[] unrolled = {0};
        for (String mode : new String[] {"true", "false", ""}) {
            SystemProperty.with(DepthwiseConv3x3Heuristics.PLANE_PROPERTY, "false", () -> SystemProperty.with(DepthwiseConv3x3Heuristics.NCHW_UNROLL3_PROPERTY, mode, () -> {
                int k = 0;
                for (DType dt : new DType[] {DType.F16, DType.BF16}) {
                    for (int[] sh : shapes) {
                        Activation act = new Activation[] {Activation.NONE, Activation.RELU6, Activation.GELU_ERF}[k % 3];
                        Problem p = new Problem(dt, Layout.NCHW, 1 + k % 2, (k & 1) == 0 ? 3 : 2, sh[0], sh[1], 1, act, (k & 2) == 0,
                                (k & 4) == 0);
                        int misalign = k % 7 == 3 ? 1 : 0;
                        boolean inPlace = p.residual() && k % 3 == 1;
                        k++;
                        boolean u3 = DepthwiseConv3x3Heuristics.customVariant(p).equals("nchw_v8u3_s1");
                        boolean expected = mode.equals("true") || (mode.isEmpty() && act.isExact());
                        assertEquals(expected, u3, mode + " " + p + " " + DepthwiseConv3x3Heuristics.customVariant(p));
                        unrolled[0] += u3 && misalign == 0 ? 1 : 0;
                        Verdict v = runAndCheck(p, Backend.CUSTOM, rnd, misalign, inPlace);
                        if (!v.pass() || (act.isExact() && !v.bitExact())) {
                            failures.add(mode + " " + p + " misalign=" + misalign + " inPlace=" + inPlace + ": " + v);
                        }
                    }
                }
            }));
        }
        // the rules between the plane kernel and nchw.cu, at their bounds: exact activations leave the plane kernel for
        // the unrolled loop from 48 x 48 (where it runs), SiLU/GELU keep it up to 64 x 64
        Object[][] bounds = {
            {DType.F16, 3, 48, 48, Activation.RELU, "nchw_v8u3_s1"}, {DType.BF16, 2, 47, 48, Activation.NONE, "nchw_plane_g8_s1"},
            {DType.BF16, 3, 56, 56, Activation.RELU6, "nchw_v8u3_s1"}, {DType.F16, 2, 56, 52, Activation.NONE, "nchw_plane_g4_s1"},
            {DType.F16, 3, 64, 64, Activation.SILU, "nchw_plane_g8_s1"}, {DType.BF16, 2, 65, 64, Activation.GELU_ERF, "nchw_v8_s1"}};
        for (Object[] b : bounds) {
            Problem p = new Problem((DType) b[0], Layout.NCHW, 2, (int) b[1], (int) b[2], (int) b[3], 1, (Activation) b[4], true, true);
            assertEquals(b[5], DepthwiseConv3x3Heuristics.customVariant(p), p.toString());
            unrolled[0] += ((String) b[5]).contains("u3") ? 1 : 0;
            Verdict v = runAndCheck(p, Backend.CUSTOM, rnd, 0, false);
            if (!v.pass() || (p.act().isExact() && !v.bitExact())) {
                failures.add("rule bound " + p + ": " + v);
            }
        }
        // an output view one element off narrows nchw.cu's access below 8, where the unrolled loop does not run, so
        // 48 x 48 to 56 x 56 exact activations take the plane kernel (stores from registers) instead
        for (DType dt : new DType[] {DType.F16, DType.BF16}) {
            Problem p = new Problem(dt, Layout.NCHW, 1, 3, 56, 48, 1, Activation.RELU, true, dt == DType.F16);
            Verdict v = runAndCheck(p, Backend.CUSTOM, rnd, 1, false);
            if (!v.pass() || !v.bitExact()) {
                failures.add("misaligned rule bound " + p + ": " + v);
            }
        }
        // the grids above are small, so their strips shrink to 1-2 rows (trips 3 and 4); a grid of 1024 threads per SM
        // keeps strips of 6 rows (trips 8, the third remainder)
        int sms = dev.gapfill.core.Gpu.device(GPU).info().smCount();
        for (DType dt : new DType[] {DType.F16, DType.BF16}) {
            Problem big = new Problem(dt, Layout.NCHW, 1, 2 * sms, 6, 4096, 1, dt == DType.F16 ? Activation.RELU : Activation.NONE,
                    true, dt == DType.BF16);
            assertEquals(6, DepthwiseConv3x3Heuristics.nchwGrid(big, 8, sms).rowsPerStrip(), big.toString());
            assertEquals("nchw_v8u3_s1", DepthwiseConv3x3Heuristics.customVariant(big), big.toString());
            unrolled[0]++;
            Verdict v = runAndCheck(big, Backend.CUSTOM, rnd, 0, false);
            if (!v.pass() || !v.bitExact()) {
                failures.add(big + ": " + v);
            }
        }
        assertTrue(unrolled[0] >= 18, "the unrolled loop ran " + unrolled[0] + " times");
        assertTrue(failures.isEmpty(), failures.size() + " failures, first: " + (failures.isEmpty() ? "" : failures.get(0)));
    }

    /**
     * nchw.cu's stride-2 strip heights: the launch picks them by wave count from the kernel's occupancy
     * ({@code DepthwiseConv3x3Heuristics.nchwStrideTwoRows}; on the H100 4 rows instead of 7 for F16 32×256×56×56 and 5
     * instead of 7 for F32 8×96×112×112), and {@code gapfill.depthwise.nchwRows} forces 3, 5 and 13 (strips whose last one
     * is short): every output bit-exact against the reference, the same problems with the default launch too.
     */
    @Test void strideTwoStripHeightsMatchTheReference() {
        Random rnd = new Random(43);
        Problem[] problems = {
            new Problem(DType.F16, Layout.NCHW, 32, 256, 56, 56, 2, Activation.NONE, true, false),
            new Problem(DType.F32, Layout.NCHW, 8, 96, 112, 112, 2, Activation.RELU, true, true),
            new Problem(DType.BF16, Layout.NCHW, 3, 40, 97, 90, 2, Activation.RELU6, false, true)};
        List<String> failures = new ArrayList<>();
        for (String rows : new String[] {"default", "3", "5", "13"}) {
            Runnable all = () -> {
                for (Problem p : problems) {
                    Verdict v = runAndCheck(p, Backend.CUSTOM, rnd, 0, false);
                    if (!v.pass() || !v.bitExact()) {
                        failures.add("rows=" + rows + " " + p + ": " + v);
                    }
                }
            };
            if (rows.equals("default")) {
                all.run();
            } else {
                SystemProperty.with(DepthwiseConv3x3Heuristics.NCHW_ROWS_PROPERTY, rows, all);
            }
        }
        assertTrue(failures.isEmpty(), failures.size() + " failures, first: " + (failures.isEmpty() ? "" : failures.get(0)));
    }

    /**
     * The whole-plane NCHW kernel (nchw_plane.cu) forced wherever its geometry applies ({@code gapfill.depthwise.nchwPlane=force}):
     * stride 1 (stride 2 must keep nchw.cu), every dtype, exact and smooth activations, plane sizes that give 1-, 2-, 4-, 7- and 8-column segments,
     * chunks whose last one ends in a tail of less than 16 bytes, bias and residual on and off, the residual in place, and
     * an output view 2 bytes off (outputs stored from registers instead of through shared memory). Bit-exact against the
     * reference for RELU6, within 1 ulp for SILU/GELU_ERF; the decision names the kernel. With the switch at
     * {@code false} the same problems run nchw.cu.
     */
    @Test void planeKernelForcedMatchesTheReference() {
        Random rnd = new Random(31);
        int[][] shapes = {{14, 14, 1}, {7, 28, 1}, {17, 6, 1}, {9, 16, 1}, {3, 1, 1}, {15, 14, 2}, {28, 28, 2}, {5, 2, 2}};
        List<String> failures = new ArrayList<>();
        int[] planeRuns = {0};
        for (String mode : new String[] {"force", "false"}) {
            SystemProperty.with(DepthwiseConv3x3Heuristics.PLANE_PROPERTY, mode, () -> {
                int k = 0;
                for (DType dt : new DType[] {DType.F32, DType.F16, DType.BF16}) {
                    for (int[] sh : shapes) {
                        Activation act = new Activation[] {Activation.RELU6, Activation.GELU_ERF, Activation.SILU}[k % 3];
                        int c = (k & 1) == 0 ? 3 : 13;
                        Problem p = new Problem(dt, Layout.NCHW, 1 + k % 2, c, sh[0], sh[1], sh[2], act, (k & 2) == 0, (k & 4) == 0);
                        int misalign = k % 5 == 2 ? 1 : 0;
                        boolean inPlace = p.residual() && k % 3 == 1;
                        k++;
                        boolean plane = DepthwiseConv3x3Heuristics.customVariant(p).startsWith("nchw_plane");
                        assertEquals(mode.equals("force") && sh[2] == 1, plane, mode + " " + p + " " + DepthwiseConv3x3Heuristics.customVariant(p));
                        planeRuns[0] += plane ? 1 : 0;
                        Verdict v = runAndCheck(p, Backend.CUSTOM, rnd, misalign, inPlace);
                        if (!v.pass() || (act == Activation.RELU6 && !v.bitExact())) {
                            failures.add(mode + " " + p + " misalign=" + misalign + " inPlace=" + inPlace + ": " + v);
                        }
                    }
                }
            });
        }
        assertEquals(15, planeRuns[0]);
        assertTrue(failures.isEmpty(), failures.size() + " failures, first: " + (failures.isEmpty() ? "" : failures.get(0)));
    }

    /**
     * The plane kernel in bands of rows (one band of one plane a chunk, staged with the rows above and below it): as the
     * rule takes it (F32 NONE/RELU/RELU6 and SiLU planes of which two do not fit 80 KiB: 112 × 112, 97 × 224, 131 × 100
     * and 120 × 112, some of whose last bands are shorter) and forced ({@code gapfill.depthwise.nchwPlane=force}) with {@code
     * gapfill.depthwise.planeBandRows} at 1, 3 and 5 rows and unset: every dtype, exact and smooth activations, rows of 16,
     * 28 (7-column segments, outputs staged), 32, 56 and 224 bytes and more, H not a multiple of the band, bias and
     * residual on and off, the residual in place, and an output view one element off (direct stores). Bit-exact against
     * the reference for NONE, RELU and RELU6, within 1 ulp for SILU/GELU_ERF; the decision names the banded kernel.
     */
    @Test void planeKernelBandsMatchTheReference() {
        Random rnd = new Random(47);
        List<String> failures = new ArrayList<>();
        int[] bandRuns = {0};
        Problem[] byRule = {
            new Problem(DType.F32, Layout.NCHW, 1, 5, 112, 112, 1, Activation.NONE, true, true),
            new Problem(DType.F32, Layout.NCHW, 1, 3, 97, 224, 1, Activation.RELU6, false, true),
            new Problem(DType.F32, Layout.NCHW, 2, 2, 131, 100, 1, Activation.RELU, true, false),
            new Problem(DType.F32, Layout.NCHW, 1, 3, 120, 112, 1, Activation.SILU, true, true)};
        for (Problem p : byRule) {
            String variant = DepthwiseConv3x3Heuristics.customVariant(p);
            assertTrue(variant.startsWith("nchw_plane_g") && variant.contains("_b"), p + " " + variant);
            Verdict v = runAndCheck(p, Backend.CUSTOM, rnd, 0, false);
            if (!v.pass() || (p.act().isExact() && !v.bitExact())) {
                failures.add("rule " + p + ": " + v);
            }
        }
        // {H, W} with W·sizeof(T) a multiple of 16 for the dtype it meets
        int[][] f32 = {{9, 4}, {13, 28}, {6, 8}, {17, 56}};
        int[][] half = {{9, 8}, {11, 16}, {5, 112}, {30, 24}};
        Activation[] acts = {Activation.NONE, Activation.SILU, Activation.RELU6, Activation.GELU_ERF};
        for (String rows : new String[] {"1", "3", "5", "unset"}) {
            Runnable all = () -> {
                int k = 0;
                for (DType dt : new DType[] {DType.F32, DType.F16, DType.BF16}) {
                    for (int[] sh : dt == DType.F32 ? f32 : half) {
                        Activation act = acts[k % 4];
                        Problem p = new Problem(dt, Layout.NCHW, 1 + k % 2, 3 + 2 * (k % 3), sh[0], sh[1], 1, act, (k & 1) == 0, (k & 2) == 0);
                        int misalign = k % 5 == 3 ? 1 : 0;
                        boolean inPlace = p.residual() && k % 3 == 1;
                        k++;
                        String variant = DepthwiseConv3x3Heuristics.customVariant(p);
                        boolean banded = variant.contains("_b");
                        int h = sh[0];
                        assertEquals(!rows.equals("unset") && Integer.parseInt(rows) < h, banded, rows + " " + p + " " + variant);
                        bandRuns[0] += banded ? 1 : 0;
                        Verdict v = runAndCheck(p, Backend.CUSTOM, rnd, misalign, inPlace);
                        if (!v.pass() || (act.isExact() && !v.bitExact())) {
                            failures.add("rows=" + rows + " " + p + " misalign=" + misalign + " inPlace=" + inPlace + " " + variant + ": " + v);
                        }
                    }
                }
            };
            SystemProperty.with(DepthwiseConv3x3Heuristics.PLANE_PROPERTY, "force", () -> {
                if (rows.equals("unset")) {
                    all.run();
                } else {
                    SystemProperty.with(DepthwiseConv3x3Heuristics.PLANE_BAND_ROWS_PROPERTY, rows, all);
                }
            });
        }
        assertEquals(34, bandRuns[0]);  // 12 problems at 1 and 3 rows, the 10 taller than 5 at 5
        assertTrue(failures.isEmpty(), failures.size() + " failures, first: " + (failures.isEmpty() ? "" : failures.get(0)));
    }

    /**
     * The stride-2 ring kernel, forced on ({@code gapfill.depthwise.nhwcRingS2=true}) in both thread geometries (2 × 4
     * and 2 × 2, {@code gapfill.depthwise.nhwcRingS2Geometry}), forced off (nhwc.cu) and as the rules pick it for these
     * small problems (F16/BF16 and exact-activation F32; 2 × 2 for F16/BF16 SiLU/GELU): every dtype, exact and smooth
     * activations, odd and even H and W (outputs whose last column or row reads the zero padding), one- and
     * several-chunk channel counts, bias and residual on and off, the residual in place, and an output view one element
     * off (the kernel's scalar stores). Bit-exact against the reference for NONE and RELU6, within 1 ulp for
     * SILU/GELU_ERF; the decision names the kernel.
     */
    @Test void strideTwoRingForcedMatchesTheReference() {
        Random rnd = new Random(37);
        int[][] hw = {{19, 23}, {8, 8}, {1, 1}, {2, 3}, {56, 9}, {7, 130}};
        Activation[] acts = {Activation.NONE, Activation.RELU6, Activation.SILU, Activation.GELU_ERF};
        List<String> failures = new ArrayList<>();
        int[] ringRuns = {0};
        for (String mode : new String[] {"true", "false", "rules", "c2w2"}) {
            String geometry = mode.equals("c2w2") ? "c2w2" : mode.equals("rules") ? "" : "c2w4";
            String ringS2 = mode.equals("c2w2") ? "true" : mode;
            SystemProperty.with(DepthwiseConv3x3Heuristics.RING_S2_GEOMETRY_PROPERTY, geometry, () -> SystemProperty.with(DepthwiseConv3x3Heuristics.RING_S2_PROPERTY, ringS2, () -> {
                int k = 0;
                for (DType dt : new DType[] {DType.F16, DType.BF16, DType.F32}) {
                    for (int[] sh : hw) {
                        Activation act = acts[k % acts.length];
                        int c = (k & 1) == 0 ? 16 : 136;
                        Problem p = new Problem(dt, Layout.NHWC, 1 + k % 2, c, sh[0], sh[1], 2, act, (k & 2) == 0, (k & 4) == 0);
                        int misalign = k % 5 == 3 ? 1 : 0;
                        boolean inPlace = p.residual() && k % 3 == 1;
                        k++;
                        String variant = DepthwiseConv3x3Heuristics.customVariant(p);
                        boolean ring = ringS2.equals("true") || mode.equals("rules") && (dt != DType.F32 || act.isExact());
                        assertEquals(ring, variant.startsWith("nhwc_ring"), mode + " " + p + " " + variant);
                        // under the rules these small problems take 2 x 2 for F16/BF16 SiLU/GELU, else 2 x 4
                        char wc = geometry.isEmpty() ? (dt != DType.F32 && !act.isExact() ? '2' : '4') : geometry.charAt(3);
                        assertEquals(ring, variant.startsWith("nhwc_ring4_c2w" + wc), mode + " " + p + " " + variant);
                        ringRuns[0] += variant.startsWith("nhwc_ring") ? 1 : 0;
                        Verdict v = runAndCheck(p, Backend.CUSTOM, rnd, misalign, inPlace);
                        if (!v.pass() || (act.isExact() && !v.bitExact())) {
                            failures.add(mode + " " + p + " misalign=" + misalign + " inPlace=" + inPlace + ": " + v);
                        }
                    }
                }
            }));
        }
        assertEquals(18 + 16 + 18, ringRuns[0]);  // forced on (both geometries) all 18; under the rules 12 half-type, 4 exact F32
        assertTrue(failures.isEmpty(), failures.size() + " failures, first: " + (failures.isEmpty() ? "" : failures.get(0)));
    }

    /**
     * y holds the residual. The shape is used by no other test, so the vendor's first call for it is this one: its
     * cuDNN algorithm search (which runs trial convolutions) must not write over the residual held in y.
     */
    @Test void residualMayBeTheOutputItself() {
        Random rnd = new Random(5);
        for (Backend b : new Backend[] {Backend.CUSTOM, Backend.VENDOR}) {
            for (Layout l : Layout.values()) {
                Problem p = new Problem(DType.F16, l, 3, 29, 23, 5, 1, Activation.SILU, true, true);
                Verdict v = runAndCheck(p, b, rnd, 0, true);
                assertTrue(v.pass(), b + " " + p + ": " + v);
            }
        }
    }

    @Test void newOutputOnThePerThreadStreamAndDecisions() {
        Random rnd = new Random(9);
        Options o = Options.builder().layout(Layout.NHWC).activation(Activation.GELU_TANH).build();
        try (Tensor hx = Poison.random(Device.CPU, DType.BF16, rnd, 2, 9, 11, 24); Tensor hw = Poison.random(Device.CPU, DType.BF16, rnd, 24, 3, 3);
             Tensor gx = hx.to(GPU); Tensor gw = hw.to(GPU);
             Tensor y = primedApply(gx, gw, o)) {
            Verdict v = DepthwiseConv3x3Verification.checkCustom(y, hx, hw, null, null, o);
            assertTrue(v.pass(), v.toString());
            Decision d = DepthwiseConv3x3.decide(gx, gw, null, null, y, o);
            assertEquals(Backend.CUSTOM, d.backend(), d.toString());
            assertEquals("nhwc_ring4_c2w4_vec_s1", d.variant());  // C = 24 <= 128: the 2-channel x 4-column ring
            assertEquals(Backend.VENDOR, DepthwiseConv3x3.decide(gx, gw, null, null, y, o.withBackend(Backend.VENDOR)).backend());
        }
    }

    @Provide Arbitrary<Problem> smallProblems() {
        return DepthwiseConv3x3Arbitraries.problems(200_000);
    }

    @Property(tries = 40)
    @GpuTest
    void randomProblemsOnBothBackends(@ForAll("smallProblems") Problem p, @ForAll long seed) {
        for (Backend b : new Backend[] {Backend.CUSTOM, Backend.VENDOR}) {
            Verdict v = runAndCheck(p, b, new Random(seed), 0, false);
            assertTrue(v.pass(), b + " " + p + ": " + v);
        }
    }

    /**
     * The vendor path's first call for a shape searches cuDNN's algorithms and times the fused call, both of which
     * synchronize: under graph capture it is refused (naming backend) before anything is enqueued, so the capture stays
     * valid and ends cleanly; once the shape has run outside a capture, the same call is checked against the reference.
     */
    @Test void vendorFirstCallUnderCaptureIsRefusedAndTheCaptureStaysValid() {
        dev.gapfill.core.Resources.release(GPU);  // no cuDNN plan of any shape left from earlier tests
        Problem p = new Problem(DType.F16, Layout.NHWC, 1, 24, 13, 11, 1, Activation.RELU, true, false);
        Options o = Options.builder().stride(1).layout(p.layout()).activation(p.act()).backend(Backend.VENDOR).build();
        Random rnd = new Random(606);
        var cuda = dev.gapfill.core.Gpu.device(GPU);
        org.bytedeco.cuda.cudart.CUgraph_st graph = new org.bytedeco.cuda.cudart.CUgraph_st();
        try (Tensor hx = Poison.random(Device.CPU, p.dtype(), rnd, p.inputShape());
             Tensor hw = Poison.random(Device.CPU, p.dtype(), rnd, p.c(), 3, 3);
             Tensor hb = Poison.random(Device.CPU, p.dtype(), rnd, p.c());
             Tensor gx = hx.to(GPU); Tensor gw = hw.to(GPU); Tensor gb = hb.to(GPU);
             Tensor y = Poison.poisoned(GPU, p.dtype(), p.outputShape());
             Stream s = Stream.create(GPU)) {
            Stream.perThread(GPU).synchronize();
            cuda.check(org.bytedeco.cuda.global.cudart.cudaStreamBeginCapture(s.handle(),
                    org.bytedeco.cuda.global.cudart.cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
            dev.gapfill.core.ArgumentException refused;
            try {
                refused = org.junit.jupiter.api.Assertions.assertThrows(dev.gapfill.core.ArgumentException.class,
                        () -> DepthwiseConv3x3.apply(gx, gw, gb, null, y, o, s));
            } finally {
                cuda.check(org.bytedeco.cuda.global.cudart.cudaStreamEndCapture(s.handle(), graph), "cudaStreamEndCapture");
                org.bytedeco.cuda.global.cudart.cudaGraphDestroy(graph);
            }
            assertEquals("backend", refused.argument(), refused.getMessage());
            DepthwiseConv3x3.apply(gx, gw, gb, null, y, o, s);  // outside the capture: the plan is made and the call runs
            s.synchronize();
            Verdict v = DepthwiseConv3x3Verification.checkVendor(y, hx, hw, hb, null, o);
            assertTrue(v.pass(), v.toString());
        }
    }

    /** The op's new output, the pool primed with poison of its size first ({@link Poison#primePool}): unwritten elements show. */
    private static Tensor primedApply(Tensor gx, Tensor gw, Options o) {
        Poison.primePool(GPU, gx.dtype(), DepthwiseConv3x3.outputShape(gx.shape(), o));
        return DepthwiseConv3x3.apply(gx, gw, null, o);
    }
}
