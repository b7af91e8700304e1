package dev.gapfill.verify;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.DepthwiseConv3x3.Activation;
import dev.gapfill.ops.DepthwiseConv3x3.Options;
import dev.gapfill.ops.reference.DepthwiseConv3x3Reference;

/**
 * Verification policy of {@link dev.gapfill.ops.DepthwiseConv3x3}, as API.
 * <ul>
 *   <li>CUSTOM: the reference defines the order (nine fp32 fmas p-major then q, then bias, residual,
 *   activation, one rounding), so NONE/RELU/RELU6 are {@link Tolerance#bitExact()} in every dtype;
 *   SILU/GELU_ERF/GELU_TANH are {@link Tolerance#ulps(int) ≤ 1 ulp} of the output dtype against the
 *   reference's fp64 activation of the fp32 pre-activation (the kernels evaluate them in fp32 for
 *   F16/BF16, in fp64 for F32).</li>
 *   <li>VENDOR (cuDNN): summation order undefined and, composed, the result is rounded to the output
 *   dtype after the convolution and after the bias add before the activation (on GELU rows the bias joins the GELU
 *   pass since the fiftieth session, one rounding fewer: the bound stays, no longer tight there). Bound:
 *   {@code |y − ref| ≤ u_out·|ref| + (2·γ_9 + 1.2·2·u_out + a·u_out)·Σ(|w·x| + |bias| + |res|)}: γ_9
 *   for nine fp32 fmas in any order with growth 2 (as {@link Tolerance#accumulation}), two
 *   intermediate roundings to the output dtype propagated through an activation of slope ≤ 1.2
 *   (GELU's maximum slope is 1.13, SiLU's 1.10, ReLU's 1), and a = 8 (four ulps) for cuDNN's own
 *   evaluation of SWISH/our GELU pass in fp32 (0 for NONE/RELU/RELU6). Stated once here, never
 *   raised to make a test pass.</li>
 * </ul>
 */
public final class DepthwiseConv3x3Verification {
    private DepthwiseConv3x3Verification() {}

    /** Tolerance of the custom kernels for {@code act}. */
    public static Tolerance custom(Activation act) {
        if (act == null) {
            throw new dev.gapfill.core.ArgumentException("act", "an activation (NONE for none)", "null");
        }
        return act.isExact() ? Tolerance.bitExact() : Tolerance.ulps(1);
    }

    /** Tolerance of the cuDNN composition, scaled per element by {@link #magnitudes}. */
    public static Tolerance vendor(DType out, Activation act) {
        if (act == null) {
            throw new dev.gapfill.core.ArgumentException("act", "an activation (NONE for none)", "null");
        }
        Tolerance acc = Tolerance.accumulation(out, 9, 2);
        double u = out.unitRoundoff();
        double extra = 1.2 * 2 * u + (act.isExact() ? 0 : 8 * u);
        return new Tolerance(Tolerance.Kind.ACCUMULATION, 0, u, acc.accTerm() + extra);
    }

    /**
     * Every element of {@code y} against the reference with {@code tol} (tensors on any device).
     *
     * @throws dev.gapfill.core.ArgumentException naming {@code residual} when it shares memory with {@code y}: after an
     *         in-place call the residual holds the result, and a reference built from it would agree with any result
     *         (pass a copy of the residual taken before the call)
     */
    public static Verdict check(Tensor y, Tensor x, Tensor w, Tensor bias, Tensor residual, Options o, Tolerance tol, String against) {
        if (o == null) {
            throw new dev.gapfill.core.ArgumentException("o", "the call's DepthwiseConv3x3.Options", "null");
        }
        dev.gapfill.core.Checks.open("y", y);
        dev.gapfill.core.Checks.open("x", x);
        dev.gapfill.core.Checks.open("w", w);
        dev.gapfill.core.Checks.rank("x", x, 4);
        if (tol == null) {
            throw new dev.gapfill.core.ArgumentException("tol", "a Tolerance", "null");
        }
        if (y != null && residual != null && !y.isClosed() && !residual.isClosed() && Verifier.sharesMemory(y, residual)) {
            throw new dev.gapfill.core.ArgumentException("residual", "the residual as it was before the call (a copy), not y's memory",
                    "a tensor sharing y's memory");
        }
        checkShapes(y, x, w, bias, residual, o);
        try (Host hx = new Host(x); Host hw = new Host(w); Host hb = new Host(bias); Host hr = new Host(residual)) {
            double[] ref = DepthwiseConv3x3Reference.compute(hx.t, hw.t, hb.t, hr.t, o.stride(), o.layout(), o.activation());
            double[] scale = tol.kind() == Tolerance.Kind.ACCUMULATION
                    ? DepthwiseConv3x3Reference.magnitudes(hx.t, hw.t, hb.t, hr.t, o.stride(), o.layout()) : null;
            return Verifier.compare(y, ref, scale, tol, against);
        }
    }

    /**
     * The op's shape and dtype rules (DepthwiseConv3x3's validation, less the device checks: the inputs may be host
     * copies of a GPU call's), so that a short {@code w} or {@code bias} is named here instead of failing inside the
     * reference.
     */
    private static void checkShapes(Tensor y, Tensor x, Tensor w, Tensor bias, Tensor residual, Options o) {
        boolean nchw = o.layout() == dev.gapfill.ops.DepthwiseConv3x3.Layout.NCHW;
        long c = nchw ? x.dim(1) : x.dim(3);
        String legend = nchw ? "N, C, H', W'" : "N, H', W', C";
        long[] ys = dev.gapfill.ops.DepthwiseConv3x3.outputShape(x.shape(), o);
        dev.gapfill.core.Checks.dtype("x", x, java.util.EnumSet.of(DType.F32, DType.F16, DType.BF16));
        DType dt = x.dtype();
        if (w.rank() == 4) {
            dev.gapfill.core.Checks.shape("w", w, "C, 1, kh, kw", c, 1, 3, 3);
        } else {
            dev.gapfill.core.Checks.rank("w", w, 3, 4);
            dev.gapfill.core.Checks.shape("w", w, "C, kh, kw", c, 3, 3);
        }
        dev.gapfill.core.Checks.dtype("w", w, dt);
        if (bias != null) {
            dev.gapfill.core.Checks.open("bias", bias);
            dev.gapfill.core.Checks.rank("bias", bias, 1);
            dev.gapfill.core.Checks.shape("bias", bias, "C", c);
            dev.gapfill.core.Checks.dtype("bias", bias, dt);
        }
        if (residual != null) {
            dev.gapfill.core.Checks.open("residual", residual);
            dev.gapfill.core.Checks.shape("residual", residual, legend, ys);
            dev.gapfill.core.Checks.dtype("residual", residual, dt);
        }
        dev.gapfill.core.Checks.shape("y", y, legend, ys);
        dev.gapfill.core.Checks.dtype("y", y, dt);
    }

    /** {@link #check} with the custom policy. */
    public static Verdict checkCustom(Tensor y, Tensor x, Tensor w, Tensor bias, Tensor residual, Options o) {
        return check(y, x, w, bias, residual, o, o == null ? null : custom(o.activation()), "reference");  // check names a null o
    }

    /** {@link #check} with the vendor policy. */
    public static Verdict checkVendor(Tensor y, Tensor x, Tensor w, Tensor bias, Tensor residual, Options o) {
        return check(y, x, w, bias, residual, o, o == null || y == null ? null : vendor(y.dtype(), o.activation()), "reference");
    }

    /** A host copy of a device tensor (or the host tensor itself), closed only if it was copied. */
    private static final class Host implements AutoCloseable {
        final Tensor t;
        private final boolean copied;

        Host(Tensor src) {
            copied = src != null && !src.device().isCpu();
            t = copied ? src.to(Device.CPU) : src;
        }

        @Override public void close() {
            if (copied) {
                t.close();
            }
        }
    }
}
