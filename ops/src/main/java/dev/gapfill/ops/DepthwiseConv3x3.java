package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.Checks;
import dev.gapfill.core.Closing;
import dev.gapfill.core.DType;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.KernelArgs;
import dev.gapfill.core.KernelModule;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.UnsupportedShapeException;
import dev.gapfill.ops.reference.DepthwiseConv3x3Reference;

import java.lang.ref.Reference;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * Depthwise 3×3 convolution with bias, residual and activation fused into one pass over memory.
 *
 * <p>{@code y[n,c,i,j] = act(bias[c] + Σ_{p,q∈0..2} w[c,p,q]·x[n,c,s·i+p−1,s·j+q−1] + res[n,c,i,j])};
 * x: [N,C,H,W] (NCHW) or [N,H,W,C] (NHWC), w: [C,3,3] (or [C,1,3,3]), bias: [C] (optional),
 * res and y: [N,C,H',W'] or [N,H',W',C] in x's layout (res optional), where N = batch, C = channels
 * (one filter each), H, W = input height and width, s = stride ∈ {1, 2}, zero padding 1, dilation 1,
 * and {@code H' = ceil(H/s)}, {@code W' = ceil(W/s)} (so stride 1 is "same").
 *
 * <p>Dtypes: F32, F16, BF16; x, w, bias, res and y all share one dtype (w and bias in x's dtype, as
 * frameworks store them). Arithmetic is fp32: the nine taps are accumulated p-major then q, each as one
 * fp32 fma from 0, then bias and residual are added in fp32, the activation is applied, and the result
 * is rounded once to the output dtype ({@link DepthwiseConv3x3Reference} defines it). The CUSTOM
 * backend is bit-exact against the reference for NONE, RELU and RELU6 and within 1 ulp for SILU and
 * the GELUs; the VENDOR backend (cuDNN grouped convolution, then cuDNN bias/activation, and a GELU pass
 * of ours since cuDNN has none) has cuDNN's undefined summation order and intermediate roundings.
 * Tensors on the CPU run the reference.
 *
 * <p>All tensors must be contiguous and on one device; y must not overlap x, w or bias (res may be y
 * itself, for an in-place residual update).
 *
 * @see DepthwiseConv3x3Heuristics for the AUTO rule
 */
public final class DepthwiseConv3x3 {
    private static final Set<DType> DTYPES = EnumSet.of(DType.F32, DType.F16, DType.BF16);
    private static final KernelModule NCHW = KernelModule.of("depthwise_conv3x3/nchw");
    private static final KernelModule NHWC = KernelModule.of("depthwise_conv3x3/nhwc");
    private static final KernelModule NHWC_RING = KernelModule.of("depthwise_conv3x3/nhwc_ring");
    private static final KernelModule NCHW_PLANE = KernelModule.of("depthwise_conv3x3/nchw_plane");

    private DepthwiseConv3x3() {}

    /** Memory layout of x, res and y. */
    public enum Layout { NCHW, NHWC }

    /** The activation; the ordinal is the kernels' code (common/depthwise_conv3x3.cuh). */
    public enum Activation {
        /** identity */
        NONE,
        /** max(v, 0), NaN propagated */
        RELU,
        /** min(max(v, 0), 6), NaN propagated */
        RELU6,
        /** v·σ(v) = v / (1 + e^−v) */
        SILU,
        /** ½·v·(1 + erf(v/√2)) */
        GELU_ERF,
        /** ½·v·(1 + tanh(√(2/π)·(v + 0.044715·v³))) */
        GELU_TANH;

        /** True where fp32 evaluation is exact, so results are bit-exact against the reference. */
        public boolean isExact() { return this == NONE || this == RELU || this == RELU6; }
    }

    /**
     * Per-call options.
     *
     * @param stride     1 or 2
     * @param layout     layout of x, res and y
     * @param activation the activation applied last
     * @param backend    AUTO, VENDOR or CUSTOM (the {@code gapfill.backend} property overrides AUTO)
     */
    public record Options(int stride, Layout layout, Activation activation, Backend backend) {
        public Options {
            if (stride != 1 && stride != 2) {
                throw new ArgumentException("stride", "1 or 2", String.valueOf(stride));
            }
            if (layout == null) {
                throw new ArgumentException("layout", "one of " + java.util.Arrays.toString(Layout.values()), "null");
            }
            if (activation == null) {
                throw new ArgumentException("activation", "one of " + java.util.Arrays.toString(Activation.values()), "null");
            }
            if (backend == null || backend == Backend.REFERENCE) {
                throw new ArgumentException("backend", "AUTO, VENDOR or CUSTOM", String.valueOf(backend));
            }
        }

        /** Stride 1, NCHW, no activation, AUTO. */
        public static Options defaults() { return new Options(1, Layout.NCHW, Activation.NONE, Backend.AUTO); }

        public static Builder builder() { return new Builder(); }

        public Options withBackend(Backend b) { return new Options(stride, layout, activation, b); }

        public Options withActivation(Activation a) { return new Options(stride, layout, a, backend); }
    }

    /** Builder of {@link Options}; starts from {@link Options#defaults()}. */
    public static final class Builder {
        private int stride = 1;
        private Layout layout = Layout.NCHW;
        private Activation activation = Activation.NONE;
        private Backend backend = Backend.AUTO;

        private Builder() {}

        public Builder stride(int s) { this.stride = s; return this; }

        public Builder layout(Layout l) { this.layout = l; return this; }

        public Builder activation(Activation a) { this.activation = a; return this; }

        public Builder backend(Backend b) { this.backend = b; return this; }

        public Options build() { return new Options(stride, layout, activation, backend); }
    }

    /**
     * A problem's shape, as the heuristics and the benchmark see it.
     *
     * @param dtype    element type of every tensor
     * @param layout   layout of x, res, y
     * @param n        batch
     * @param c        channels
     * @param h        input height
     * @param w        input width
     * @param stride   1 or 2
     * @param act      activation
     * @param bias     whether a bias is given
     * @param residual whether a residual is given
     */
    public record Problem(DType dtype, Layout layout, int n, int c, int h, int w, int stride, Activation act, boolean bias,
                          boolean residual) {
        public Problem {
            if (dtype == null || !DTYPES.contains(dtype)) {
                throw new ArgumentException("dtype", "one of " + DTYPES, String.valueOf(dtype));
            }
            if (layout == null) {
                throw new ArgumentException("layout", "NCHW or NHWC", "null");
            }
            if (act == null) {
                throw new ArgumentException("act", "an activation", "null");
            }
            if (n <= 0 || c <= 0 || h <= 0 || w <= 0) {
                throw new ArgumentException("shape", "N, C, H, W >= 1", n + ", " + c + ", " + h + ", " + w);
            }
            if (stride != 1 && stride != 2) {
                throw new ArgumentException("stride", "1 or 2", String.valueOf(stride));
            }
        }

        /** H' = ceil(H / s), written so that H = 2^31 − 1 does not wrap. */
        public int outH() { return (h - 1) / stride + 1; }

        /** W' = ceil(W / s), written so that W = 2^31 − 1 does not wrap. */
        public int outW() { return (w - 1) / stride + 1; }

        public long[] inputShape() { return layout == Layout.NCHW ? new long[] {n, c, h, w} : new long[] {n, h, w, c}; }

        public long[] outputShape() {
            return layout == Layout.NCHW ? new long[] {n, c, outH(), outW()} : new long[] {n, outH(), outW(), c};
        }

        public long inputElements() { return (long) n * c * h * w; }

        public long outputElements() { return (long) n * c * outH() * outW(); }

        /** The fewest bytes the op must move: x, y, (res), w, (bias), each once. */
        public long minBytes() {
            long e = dtype.bytes();
            return e * (inputElements() + outputElements() * (residual ? 2 : 1) + 9L * c + (bias ? c : 0));
        }

        /** 2 flops per tap plus bias and residual adds. */
        public double flops() {
            return outputElements() * (18.0 + (bias ? 1 : 0) + (residual ? 1 : 0));
        }

        @Override public String toString() {
            return String.format(Locale.ROOT, "%s %s N=%d C=%d H=%d W=%d s=%d %s%s%s", dtype, layout, n, c, h, w, stride, act,
                    bias ? " +bias" : "", residual ? " +res" : "");
        }
    }

    // ------------------------------------------------------------------ shape helpers

    /**
     * The output shape for input shape {@code xShape} (in {@code options.layout()}); a null shape, one not of rank 4
     * or one with a dimension below 1 is refused naming "x".
     */
    public static long[] outputShape(long[] xShape, Options options) {
        if (options == null) {
            throw new ArgumentException("options", "an Options record", "null");
        }
        if (xShape == null) {
            throw new ArgumentException("x", "rank 4 shape", "null");
        }
        if (xShape.length != 4) {
            throw new ArgumentException("x", "rank 4 shape", "rank " + xShape.length);
        }
        for (long d : xShape) {  // as a tensor's shape is (apply() sees only those): no empty or negative output shape
            if (d <= 0) {
                throw new ArgumentException("x", "rank 4 shape with every dimension >= 1", java.util.Arrays.toString(xShape));
            }
        }
        long s = options.stride();  // ceil(d / s) as (d - 1) / s + 1: no wrap for d near 2^63 (Problem.outH does the same)
        if (options.layout() == Layout.NCHW) {
            return new long[] {xShape[0], xShape[1], (xShape[2] - 1) / s + 1, (xShape[3] - 1) / s + 1};
        }
        return new long[] {xShape[0], (xShape[1] - 1) / s + 1, (xShape[2] - 1) / s + 1, xShape[3]};
    }

    // ------------------------------------------------------------------ entry points

    /** {@code act(conv(x, w) + bias)} into a new tensor on the per-thread stream. bias may be null. */
    public static Tensor apply(Tensor x, Tensor w, Tensor bias, Options options) {
        return apply(x, w, bias, null, options);
    }

    /** {@code act(conv(x, w) + bias + residual)} into a new tensor on the per-thread stream; bias and residual may be null. */
    public static Tensor apply(Tensor x, Tensor w, Tensor bias, Tensor residual, Options options) {
        Problem p = validate(x, w, bias, residual, null, options);  // everything but the output, before allocating it
        long[] ys = outputShape(x.shape(), options);
        if (!x.device().isCpu()  // and the path's own refusals: CUSTOM where it does not apply, the composition's limits
                && decide(p, options.backend(), x.device()).backend() == Backend.VENDOR) {
            DepthwiseConv3x3Cudnn.checkPasses(p, ys[0] * ys[1] * ys[2] * ys[3], Gpu.device(x.device()).info().smCount());
        }
        Tensor out = Tensor.empty(x.device(), x.dtype(), ys);
        try {
            apply(x, w, bias, residual, out, options, null);
        } catch (RuntimeException | Error e) {  // an Error too (JavaCPP's or the heap's OutOfMemoryError): no leaked output
            Closing.closeAfter(e, out);
            throw e;
        }
        return out;
    }
    /**
     * {@code out = act(conv(x, w) + bias + residual)} on {@code stream} (null: the per-thread stream).
     *
     * @param bias     [C] or null
     * @param residual y's shape, or null; may be {@code out} itself
     * @throws ArgumentException         on a closed tensor, wrong rank/shape/dtype/device, non-contiguous or
     *                                   overlapping tensors, or a tensor too large for 32-bit indexing
     * @throws UnsupportedShapeException when CUSTOM is forced on a device the kernels are not built for
     */
    public static void apply(Tensor x, Tensor w, Tensor bias, Tensor residual, Tensor out, Options options, Stream stream) {
        Checks.open("out", out);
        Problem p = validate(x, w, bias, residual, out, options);
        if (x.device().isCpu()) {
            DepthwiseConv3x3Reference.run(x, w, bias, residual, out, options.stride(), options.layout(), options.activation());
            return;
        }
        Stream s = OpStreams.pick(x.device(), stream);
        Decision d = decide(p, options.backend(), x.device());
        OpStreams.record(s, x, w, bias, residual, out);  // before the launches: work already queued orders the frees if a later one fails
        try {
            if (d.backend() == Backend.VENDOR) {
                DepthwiseConv3x3Cudnn.run(p, x, w, bias, residual, out, s);
            } else {
                launchCustom(p, x, w, bias, residual, out, s);
            }
        } finally {  // the tensors stay reachable until every launch is queued: their cleaner must not free them before (recorded above)
            Reference.reachabilityFence(x);
            Reference.reachabilityFence(w);
            Reference.reachabilityFence(bias);
            Reference.reachabilityFence(residual);
            Reference.reachabilityFence(out);
        }
    }

    /**
     * What {@link #apply} would run for these tensors and options, without running it (validates the
     * same way). CPU tensors: {@link Decision#reference()}.
     */
    public static Decision decide(Tensor x, Tensor w, Tensor bias, Tensor residual, Tensor out, Options options) {
        Checks.open("out", out);
        Problem p = validate(x, w, bias, residual, out, options);
        if (x.device().isCpu()) {
            return Decision.reference();
        }
        Decision d = decide(p, options.backend(), x.device());
        if (d.backend() != Backend.CUSTOM) {
            return d;
        }
        // the variant the launch takes for these pointers (launchCustom narrows access widths by the real addresses)
        return new Decision(Backend.CUSTOM, DepthwiseConv3x3Heuristics.customVariant(p, x.address(), out.address(),
                residual == null ? 0 : residual.address()), d.reason());
    }

    private static Decision decide(Problem p, Backend requested, dev.gapfill.core.Device device) {
        Backend b = Backend.resolve(requested);
        dev.gapfill.core.DeviceInfo info = Gpu.device(device).info();
        switch (b) {
            case VENDOR:
                return new Decision(Backend.VENDOR, DepthwiseConv3x3Heuristics.vendorVariant(p), "VENDOR forced");
            case CUSTOM: {
                String why = DepthwiseConv3x3Heuristics.customUnsupported(p, info);
                if (why != null) {
                    throw new UnsupportedShapeException("backend", "a problem the custom depthwise kernels support (" + why + ")",
                            "CUSTOM forced on " + p + " on " + info.name());
                }
                return new Decision(Backend.CUSTOM, DepthwiseConv3x3Heuristics.customVariant(p), "CUSTOM forced");
            }
            default:
                return DepthwiseConv3x3Heuristics.decide(p, info);
        }
    }

    /** Validates every argument and returns the problem; nothing is launched. A null {@code out} skips the output's checks. */
    static Problem validate(Tensor x, Tensor w, Tensor bias, Tensor residual, Tensor out, Options options) {
        if (options == null) {
            throw new ArgumentException("options", "an Options record", "null");
        }
        Checks.open("x", x);
        Checks.open("w", w);
        if (out != null) {
            Checks.open("out", out);
        }
        if (bias != null) {
            Checks.open("bias", bias);
        }
        if (residual != null) {
            Checks.open("residual", residual);
        }
        Checks.rank("x", x, 4);
        Checks.dtype("x", x, DTYPES);
        DType dt = x.dtype();
        boolean nchw = options.layout() == Layout.NCHW;
        long n = x.dim(0);
        long c = nchw ? x.dim(1) : x.dim(3);
        long h = nchw ? x.dim(2) : x.dim(1);
        long wd = nchw ? x.dim(3) : x.dim(2);
        String legend = nchw ? "N, C, H', W'" : "N, H', W', C";
        long[] ys = outputShape(x.shape(), options);
        if (w.rank() == 4) {
            Checks.shape("w", w, "C, 1, kh, kw", c, 1, 3, 3);
        } else {
            Checks.rank("w", w, 3, 4);
            Checks.shape("w", w, "C, kh, kw", c, 3, 3);
        }
        Checks.dtype("w", w, dt);
        if (bias != null) {
            Checks.rank("bias", bias, 1);
            Checks.shape("bias", bias, "C", c);
            Checks.dtype("bias", bias, dt);
        }
        if (out != null) {
            Checks.shape("out", out, legend, ys);
            Checks.dtype("out", out, dt);
        }
        if (residual != null) {
            Checks.shape("residual", residual, legend, ys);
            Checks.dtype("residual", residual, dt);
        }
        for (Object[] t : new Object[][] {{"w", w}, {"bias", bias}, {"residual", residual}, {"out", out}}) {
            if (t[1] != null) {
                Checks.sameDevice((String) t[0], (Tensor) t[1], x.device());
            }
        }
        Checks.contiguous("x", x);
        Checks.contiguous("w", w);
        if (out != null) {
            Checks.contiguous("out", out);
        }
        if (bias != null) {
            Checks.contiguous("bias", bias);
        }
        if (residual != null) {
            Checks.contiguous("residual", residual);
        }
        Checks.int32Indexable("x", x);  // out (and residual) have ceil(H/s)·ceil(W/s) <= H·W positions: x's bound covers them
        if (out != null) {
            Checks.noOverlap("out", out, "x", x);
            Checks.noOverlap("out", out, "w", w);
            Checks.noOverlap("out", out, "bias", bias);
            Checks.noPartialOverlap("out", out, "residual", residual);  // residual == out: the in-place residual update
        }
        if (c > Integer.MAX_VALUE || h > Integer.MAX_VALUE || wd > Integer.MAX_VALUE) {
            throw new ArgumentException("x", "dims below 2^31", java.util.Arrays.toString(x.shape()));
        }
        return new Problem(dt, options.layout(), (int) n, (int) c, (int) h, (int) wd, options.stride(), options.activation(),
                bias != null, residual != null);
    }

    // ------------------------------------------------------------------ custom launch

    private static boolean aligned(Tensor t, int bytes) { return t == null || (t.address() % bytes) == 0; }

    /**
     * The plane NCHW kernel (whole planes, or bands of rows where two planes do not fit) where {@link
     * DepthwiseConv3x3Heuristics#usePlane(Problem, int)} picks it against nchw.cu at access width {@code vw} and its
     * geometry applies; false otherwise.
     */
    private static boolean launchPlane(Problem p, int vw, Tensor x, Tensor out, Tensor residual, KernelArgs args, Stream s, int sms) {
        if (!DepthwiseConv3x3Heuristics.usePlane(p, vw)) {
            return false;
        }
        DepthwiseConv3x3Heuristics.PlaneGrid g = DepthwiseConv3x3Heuristics.planeGrid(p, aligned(x, 16), aligned(out, 16));
        if (g == null) {
            return false;
        }
        dev.gapfill.core.KernelFunction f = NCHW_PLANE.function(s.cudaDevice(), g.symbol(p));
        int vec = aligned(out, g.storeBytes(p.dtype())) && aligned(residual, g.storeBytes(p.dtype())) ? 1 : 0;
        // persistent: each block walks chunks blockIdx.x, + gridDim.x, ... with the next chunk's copies in flight
        int grid = (int) Math.min(g.chunks(), (long) f.residentBlocksPerSm(g.threads(), g.smemBytes()) * sms);
        args.i32(p.n() * p.c()).i32(p.c()).i32(p.h()).i32(p.w()).i32(g.planesPerChunk()).i32(g.rowsPerStrip()).i32(g.bandRows())
                .i32(p.act().ordinal()).i32(vec).i32(g.stage() ? 1 : 0);
        f.launch(s, grid, 1, 1, g.threads(), 1, 1, g.smemBytes(), args);
        return true;
    }

    /** Keep in step with {@link DepthwiseConv3x3Heuristics#customVariant(Problem, long, long, long)}, which names what runs here. */
    private static void launchCustom(Problem p, Tensor x, Tensor w, Tensor bias, Tensor residual, Tensor out, Stream s) {
        int esz = p.dtype().bytes();
        int ho = p.outH();
        int wo = p.outW();
        int sms = Gpu.device(x.device()).info().smCount();
        String prefix = "dwconv3x3_" + p.layout().name().toLowerCase(Locale.ROOT) + "_" + p.dtype().name().toLowerCase(Locale.ROOT)
                + "_s" + p.stride();
        KernelArgs args = KernelArgs.begin().ptr(x).ptr(w).ptr(bias).ptr(residual).ptr(out);
        if (DepthwiseConv3x3Heuristics.useRing(p)) {
            DepthwiseConv3x3Heuristics.RingGrid g = DepthwiseConv3x3Heuristics.ringGrid(p, Gpu.device(x.device()).info());
            // cp.async copies 16 bytes (8 or 4 channels) per access; the epilogue reads res and writes y cpt channels at a time
            int cptBytes = g.config().channelsPerThread() * esz;
            int vec = p.c() % DepthwiseConv3x3Heuristics.ringVectorChannels(p) == 0 && aligned(x, 16) && aligned(out, cptBytes)
                    && aligned(residual, cptBytes) ? 1 : 0;
            args.i32(p.h()).i32(p.w()).i32(p.c()).i32(g.cgs()).i32(g.tws()).i32(g.colTiles()).i32(g.chunks()).i32(g.strips())
                    .i32(g.rowsPerStrip()).i32(p.act().ordinal()).i32(vec);
            NHWC_RING.function(s.cudaDevice(), g.config().symbol(p.dtype()))
                    .launch(s, (int) g.blocks(), 1, 1, g.threads(), 1, 1, g.smemBytes(), args);
        } else if (DepthwiseConv3x3Heuristics.useRingS2(p)) {
            DepthwiseConv3x3Heuristics.RingGrid g = DepthwiseConv3x3Heuristics.ringGridS2(p, Gpu.device(x.device()).info());
            int cptBytes = g.config().channelsPerThread() * esz;  // C is vectorisable (useRingS2)
            int vec = aligned(x, 16) && aligned(out, cptBytes) && aligned(residual, cptBytes) ? 1 : 0;
            args.i32(p.h()).i32(p.w()).i32(p.c()).i32(g.cgs()).i32(g.tws()).i32(g.colTiles()).i32(g.chunks()).i32(g.strips())
                    .i32(g.rowsPerStrip()).i32(p.act().ordinal()).i32(vec);
            NHWC_RING.function(s.cudaDevice(), DepthwiseConv3x3Heuristics.ringS2Symbol(g.config(), p.dtype()))
                    .launch(s, (int) g.blocks(), 1, 1, g.threads(), 1, 1, g.smemBytes(), args);
        } else if (p.layout() == Layout.NHWC) {
            int cpt = DepthwiseConv3x3Heuristics.nhwcChannelsPerThread(p);
            DepthwiseConv3x3Heuristics.Grid g = DepthwiseConv3x3Heuristics.nhwcGrid(p, sms);
            int bytes = cpt * esz;
            int vec = p.c() % cpt == 0 && aligned(x, bytes) && aligned(out, bytes) && aligned(residual, bytes) ? 1 : 0;
            args.i32(p.n()).i32(p.h()).i32(p.w()).i32(p.c()).i32(ho).i32(wo).i32(g.rowsPerStrip()).i32(g.chunk())
                    .i32(p.act().ordinal()).i32(vec);
            NHWC.function(s.cudaDevice(), prefix).launch(s, (int) g.blocks(), 1, 1, DepthwiseConv3x3Heuristics.BLOCK, 1, 1, 0, args);
        } else {
            // the widest access the shape allows, narrowed until every pointer is aligned to it
            int vw = DepthwiseConv3x3Heuristics.nchwVectorWidth(p);
            while (vw > 1 && !(aligned(x, vw * esz) && aligned(out, vw * esz) && aligned(residual, vw * esz))) {
                vw /= 2;
            }
            if (launchPlane(p, vw, x, out, residual, args, s, sms)) {
                return;
            }
            String symbol = prefix + "_v" + vw + (DepthwiseConv3x3Heuristics.useNchwUnroll3(p, vw) ? "_u3" : "");
            dev.gapfill.core.KernelFunction f = NCHW.function(s.cudaDevice(), symbol);
            DepthwiseConv3x3Heuristics.Grid g = DepthwiseConv3x3Heuristics.nchwGrid(p, vw, sms,
                    p.stride() == 2 ? f.residentBlocksPerSm(DepthwiseConv3x3Heuristics.BLOCK, 0) : 0);
            args.i32(p.n() * p.c()).i32(p.c()).i32(p.h()).i32(p.w()).i32(ho).i32(wo).i32(g.rowsPerStrip()).i32(p.act().ordinal());
            f.launch(s, (int) g.blocks(), 1, 1, DepthwiseConv3x3Heuristics.BLOCK, 1, 1, 0, args);
        }
    }
}
