package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.CudaDevice;
import dev.gapfill.core.DType;
import dev.gapfill.core.DevicePointer;
import dev.gapfill.core.Event;
import dev.gapfill.core.GapfillException;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.InitcheckAid;
import dev.gapfill.core.KernelArgs;
import dev.gapfill.core.KernelModule;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.VendorHandles;
import dev.gapfill.ops.DepthwiseConv3x3.Activation;
import dev.gapfill.ops.DepthwiseConv3x3.Layout;
import dev.gapfill.ops.DepthwiseConv3x3.Problem;
import org.bytedeco.cuda.cudnn.cudnnActivationStruct;
import org.bytedeco.cuda.cudnn.cudnnContext;
import org.bytedeco.cuda.cudnn.cudnnConvolutionFwdAlgoPerf_t;
import org.bytedeco.cuda.cudnn.cudnnConvolutionStruct;
import org.bytedeco.cuda.cudnn.cudnnFilterStruct;
import org.bytedeco.cuda.cudnn.cudnnTensorStruct;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.SizeTPointer;

import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static org.bytedeco.cuda.global.cudnn.*;

/**
 * The VENDOR path of {@link DepthwiseConv3x3}: what a user composing cuDNN calls gets, configured as
 * well as cuDNN allows.
 * <ul>
 *   <li>Convolution: grouped convolution with groups = C ({@code cudnnSetConvolutionGroupCount}),
 *   cross-correlation, padding 1, the given stride, fp32 compute type for every dtype; tensor-op math
 *   for F16/BF16, FMA math for F32 (no TF32, so the vendor computes what the op promises); the fastest
 *   algorithm for the shape measured once with {@code cudnnFindConvolutionForwardAlgorithmEx} on the first call's own
 *   x, w and y (so cuDNN's trial runs read initialised data; y is overwritten by the real call; where y holds the
 *   residual, a scratch output at y's offset from 16 bytes) and cached per (device, dtype, layout, N, C, H, W, stride,
 *   the operands' common alignment up to 16 bytes) with its workspace size.</li>
 *   <li>Bias, residual, activation: {@code cudnnConvolutionBiasActivationForward} (y = act(conv + z + bias),
 *   z = the residual) for RELU, and for NONE when the chosen algorithm is IMPLICIT_PRECOMP_GEMM (cuDNN's
 *   condition for IDENTITY); a zero bias is supplied when none is given; a residual that is y itself (in place)
 *   always composes. The first such call of a plan times the fused call against the composition (3 runs each)
 *   and keeps the faster — on an H100 the fused call lost in every harness row, by up to 7×, so a user would
 *   compose. If cuDNN refuses the fused call for the shape, the plan remembers it and composes:
 *   residual copied into y and added through the convolution's beta = 1, {@code cudnnAddTensor} for
 *   the bias, {@code cudnnActivationForward} for RELU, CLIPPED_RELU(6) and SWISH(β = 1), and for the GELUs
 *   (no cuDNN activation) an elementwise pass of ours ({@code depthwise_conv3x3/vendor_gelu.cu}) that adds the bias
 *   itself (no {@code cudnnAddTensor} then), as a user's own GELU kernel would.</li>
 *   <li>Workspace, and the zero bias a fused call needs when no bias is given: allocated per call from the
 *   stream-ordered pool (cheap) and freed in stream order. The plan cache holds host-side descriptors only;
 *   {@link dev.gapfill.core.Resources#release} destroys them ({@link OpCaches}).</li>
 * </ul>
 * Its summation order is cuDNN's (undefined) and F16/BF16 results are rounded to the dtype between the
 * composed calls; the tests hold it to an accumulation tolerance, never to bit-exactness.
 */
final class DepthwiseConv3x3Cudnn {
    private static final KernelModule GELU = KernelModule.of("depthwise_conv3x3/vendor_gelu");
    static final Map<Key, Plan> PLANS = new ConcurrentHashMap<>();
    private static final Map<Activation, cudnnActivationStruct> ACTS = new EnumMap<>(Activation.class);
    private static cudnnActivationStruct identity;

    private DepthwiseConv3x3Cudnn() {}

    /**
     * A plan's key. {@code alignment}: the largest of 16, 8, 4, 2, 1 bytes that every operand's address is a multiple
     * of. An operand off 16 bytes gets its own algorithm search at that alignment, since an algorithm cuDNN chose on
     * aligned memory may use vector accesses that the misaligned call cannot take (two read-only reviews, fiftieth
     * session; such calls had reused the aligned call's plan).
     */
    record Key(int device, DType dtype, Layout layout, int n, int c, int h, int w, int stride, int alignment) {}

    /** Descriptors and the chosen algorithm of one shape. */
    static final class Plan {
        cudnnTensorStruct xDesc;
        cudnnTensorStruct yDesc;
        cudnnTensorStruct biasDesc;
        cudnnFilterStruct wDesc;
        cudnnConvolutionStruct conv;
        int algo;
        int mathType;
        long workspaceBytes;
        float findMs;
        volatile boolean fusedRefused;
        /** Per fused activation (RELU, IDENTITY): null until measured, then whether the fused call beat the composition. */
        volatile Boolean fusedFasterRelu;
        volatile Boolean fusedFasterIdentity;

        String describe() {
            return String.format(Locale.ROOT, "algo %d, math %d, workspace %d B, find %.3f ms%s%s%s", algo, mathType, workspaceBytes,
                    findMs, fusedRefused ? ", fused bias+act refused" : "",
                    fusedFasterRelu == null ? "" : (fusedFasterRelu ? ", fused relu faster" : ", composed relu faster"),
                    fusedFasterIdentity == null ? "" : (fusedFasterIdentity ? ", fused identity faster" : ", composed identity faster"));
        }
    }

    /** The cached plan's description (algorithm, math, workspace), or null if none was built yet. */
    static String describe(Problem p, int deviceOrdinal) {
        for (int alignment = 16; alignment >= 1; alignment /= 2) {  // the aligned call's plan first
            Plan plan = PLANS.get(key(p, deviceOrdinal, alignment));
            if (plan != null) {
                return plan.describe();
            }
        }
        return null;
    }

    private static Key key(Problem p, int ordinal, int alignment) {
        return new Key(ordinal, p.dtype(), p.layout(), p.n(), p.c(), p.h(), p.w(), p.stride(), alignment);
    }

    /** The largest of 16, 8, 4, 2, 1 that every operand's address given (null: none) is a multiple of. */
    static int alignment(Tensor... ts) {
        long[] addresses = new long[ts.length];
        for (int i = 0; i < ts.length; i++) {
            addresses[i] = ts[i] == null ? 0 : ts[i].address();
        }
        return alignmentOf(addresses);
    }

    /** The largest of 16, 8, 4, 2, 1 that every address is a multiple of. */
    static int alignmentOf(long... addresses) {
        long bits = 16;
        for (long a : addresses) {
            bits |= a;
        }
        return (int) Long.lowestOneBit(bits);
    }

    static void run(Problem p, Tensor x, Tensor w, Tensor bias, Tensor residual, Tensor out, Stream s) {
        CudaDevice d = s.cudaDevice();
        checkPasses(p, out.numel(), d.info().smCount());  // before any work
        int alignment = alignment(x, w, bias, residual, out);
        // y holds the residual (z == y): the search writes scratch, and the call always composes (below)
        boolean aliased = residual != null && residual.address() == out.address();
        Plan plan = PLANS.get(key(p, d.ordinal(), alignment));
        // the algorithm search and the fused-or-composed timing synchronize: not while s is being captured into a graph
        // (checked before the thread's cuDNN handle is made: its creation allocates, which a capture does not allow either;
        // asked only where a plan is missing or a timing due, so a planned shape's calls pay no query)
        if (plan == null && s.isCapturing()) {
            throw new ArgumentException("backend", "a cuDNN plan made before the capture (run this shape, with operands of the same alignment, once outside it) or the"
                    + " CUSTOM path: the vendor path's first call searches cuDNN's algorithms, which synchronizes", "VENDOR under graph capture");
        }
        cudnnContext h = VendorHandles.cudnn(s);
        if (plan == null) {
            synchronized (PLANS) {
                // a virtual thread that waited for this monitor may resume on another carrier (JDK 24+), where the
                // device's context need not be current: set it again before the search (as KernelFunction does)
                d.activate();
                plan = PLANS.computeIfAbsent(key(p, d.ordinal(), alignment), k -> build(p, d, h, x, w, out, aliased, s));
            }
            d.activate();
        }
        Tensor ws = plan.workspaceBytes > 0 ? Tensor.empty(s.device(), DType.I8, s, plan.workspaceBytes) : null;
        Tensor zero = null;
        Throwable failure = null;
        try {
            Pointer wsPtr = ws == null ? null : new DevicePointer(ws.address());
            Pointer xp = new DevicePointer(x.address());
            Pointer wp = new DevicePointer(w.address());
            Pointer yp = new DevicePointer(out.address());
            Activation act = p.act();
            // An aliased residual (z == y) always composes (the residual already in y, added through beta = 1), whatever the
            // plan measured for this shape on a call without one: the fused call is never run, nor timed, with z == y.
            boolean fusible = !plan.fusedRefused && !aliased
                    && (act == Activation.RELU || (act == Activation.NONE && plan.algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM));
            Tensor fusedBias = bias;
            if (fusible) {
                Boolean faster = act == Activation.RELU ? plan.fusedFasterRelu : plan.fusedFasterIdentity;
                boolean capturing = faster == null && s.isCapturing();
                if (capturing) {
                    // composed for this call only, decided before a zero bias is made for nothing (a read-only review):
                    // the timing synchronizes; a later call outside a capture still measures
                    faster = Boolean.FALSE;
                }
                if (bias == null && (faster == null || faster)) {
                    // The fused call needs a bias operand: a zero one for this call when the caller gave none, freed in
                    // stream order below (a per-plan zero bias kept device memory for every shape ever seen).
                    zero = zeroBias(p, s);
                    fusedBias = zero;
                }
                if (faster == null) {
                    // Measured once per plan: on H100 (cuDNN 9.14) the fused call was slower than the composition
                    // in every harness row (e.g. f16 NHWC 32x256x56x56: 1408 µs fused vs ~190 µs composed).
                    faster = measureFusedFaster(p, plan, h, d, xp, wp, yp, bias, fusedBias, residual, out, wsPtr, s);
                    if (act == Activation.RELU) {
                        plan.fusedFasterRelu = faster;
                    } else {
                        plan.fusedFasterIdentity = faster;
                    }
                }
                fusible = faster && !plan.fusedRefused;
            }
            if (fusible && fused(p, plan, h, d, xp, wp, yp, fusedBias, residual, wsPtr, s)) {
                return;
            }
            composed(p, plan, h, d, xp, wp, yp, bias, residual, out, wsPtr, s);
        } catch (RuntimeException | Error e) {
            failure = e;
            throw e;
        } finally {
            // freed in stream order after this call's work; after a failure, a failed record or free must not hide it
            if (failure == null) {
                for (Tensor t : new Tensor[] {ws, zero}) {
                    if (t != null) {
                        t.recordStream(s);
                    }
                }
                dev.gapfill.core.Closing.closeAll(ws, zero);
            } else {
                for (Tensor t : new Tensor[] {ws, zero}) {
                    if (t != null) {
                        try {
                            t.recordStream(s);
                        } catch (RuntimeException recordFailure) {
                            failure.addSuppressed(recordFailure);
                        }
                    }
                }
                dev.gapfill.core.Closing.closeAfter(failure, ws, zero);
            }
        }
    }

    /** cudnnConvolutionBiasActivationForward with bias {@code b} (never null); false (and the plan remembers) where cuDNN refuses. */
    private static boolean fused(Problem p, Plan plan, cudnnContext h, CudaDevice d, Pointer xp, Pointer wp, Pointer yp, Tensor b,
                                 Tensor residual, Pointer wsPtr, Stream s) {
        int st = cudnnConvolutionBiasActivationForward(h, HostConstants.ONE_F32, plan.xDesc, xp, plan.wDesc, wp, plan.conv, plan.algo, wsPtr,
                plan.workspaceBytes, residual != null ? HostConstants.ONE_F32 : HostConstants.ZERO_F32, plan.yDesc,
                residual != null ? new DevicePointer(residual.address()) : yp, plan.biasDesc, new DevicePointer(b.address()),
                activation(p.act() == Activation.RELU ? Activation.RELU : null, d), plan.yDesc, yp);
        if (st == CUDNN_STATUS_SUCCESS) {
            return true;
        }
        if (!isRefusal(st)) {
            VendorHandles.checkDnn(d, st, "cudnnConvolutionBiasActivationForward(" + p + ")");
        }
        plan.fusedRefused = true; // cuDNN has no fused kernel for this grouped shape: compose instead
        return false;
    }

    /** Times the fused call against the composition (3 runs each after one warm-up, same stream); true if fused is faster. */
    private static boolean measureFusedFaster(Problem p, Plan plan, cudnnContext h, CudaDevice d, Pointer xp, Pointer wp, Pointer yp,
                                              Tensor bias, Tensor fusedBias, Tensor residual, Tensor out, Pointer wsPtr, Stream s) {
        try (Event e0 = new Event(s.device()); Event e1 = new Event(s.device()); Event e2 = new Event(s.device())) {
            if (!fused(p, plan, h, d, xp, wp, yp, fusedBias, residual, wsPtr, s)) {
                return false;
            }
            composed(p, plan, h, d, xp, wp, yp, bias, residual, out, wsPtr, s);
            e0.record(s);
            for (int i = 0; i < 3; i++) {
                fused(p, plan, h, d, xp, wp, yp, fusedBias, residual, wsPtr, s);
            }
            e1.record(s);
            for (int i = 0; i < 3; i++) {
                composed(p, plan, h, d, xp, wp, yp, bias, residual, out, wsPtr, s);
            }
            e2.record(s);
            e2.synchronize();
            return e1.elapsedMillisSince(e0) < e2.elapsedMillisSince(e1);
        }
    }

    /** Convolution (residual through beta = 1), cudnnAddTensor for the bias (in the GELU pass for the GELUs), then the activation. */
    private static void composed(Problem p, Plan plan, cudnnContext h, CudaDevice d, Pointer xp, Pointer wp, Pointer yp, Tensor bias,
                                 Tensor residual, Tensor out, Pointer wsPtr, Stream s) {
        Activation act = p.act();
        boolean addResidual = residual != null;
        if (addResidual && residual.address() != out.address()) {
            d.check(cudart.cudaMemcpyAsync(yp, new DevicePointer(residual.address()), out.byteSize(), cudart.cudaMemcpyDeviceToDevice,
                    s.handle()), "cudaMemcpyAsync(residual -> y)");
        }
        int rc = cudnnConvolutionForward(h, HostConstants.ONE_F32, plan.xDesc, xp, plan.wDesc, wp, plan.conv, plan.algo, wsPtr,
                plan.workspaceBytes, addResidual ? HostConstants.ONE_F32 : HostConstants.ZERO_F32, plan.yDesc, yp);
        if (rc != CUDNN_STATUS_SUCCESS) {  // the message (the problem's toString) is built only on failure
            VendorHandles.checkDnn(d, rc, "cudnnConvolutionForward(" + p + ")");
        }
        boolean gelu = act == Activation.GELU_ERF || act == Activation.GELU_TANH;
        if (bias != null && !gelu) {  // the GELU pass adds the bias itself
            VendorHandles.checkDnn(d, cudnnAddTensor(h, HostConstants.ONE_F32, plan.biasDesc, new DevicePointer(bias.address()), HostConstants.ONE_F32, plan.yDesc, yp),
                    "cudnnAddTensor(bias)");
        }
        switch (act) {
            case NONE:
                break;
            case RELU:
            case RELU6:
            case SILU:
                int ra = cudnnActivationForward(h, activation(act, d), HostConstants.ONE_F32, plan.yDesc, yp, HostConstants.ZERO_F32, plan.yDesc, yp);
                if (ra != CUDNN_STATUS_SUCCESS) {
                    VendorHandles.checkDnn(d, ra, "cudnnActivationForward(" + act + ")");
                }
                break;
            default:
                launchGelu(p, out, bias, act, s);
                break;
            }
    }

    /** The statuses by which cuDNN declines a fused call it has no kernel for (NOT_SUPPORTED* and BAD_PARAM*). */
    private static boolean isRefusal(int st) {
        return (st >= CUDNN_STATUS_NOT_SUPPORTED && st < CUDNN_STATUS_NOT_SUPPORTED + 1000)
                || (st >= CUDNN_STATUS_BAD_PARAM && st < CUDNN_STATUS_BAD_PARAM + 1000);
    }

    /**
     * The GELU pass over y, in place; with a bias, the bias is added in the same pass (channel (i / inner) % C, inner =
     * H'·W' for NCHW, 1 for NHWC), as a user writing that pass would: until the fiftieth session the composition added
     * it with {@code cudnnAddTensor} first, one more read and write of y (about 60 of 302 µs at 32×256×56×56 F16 NCHW on
     * an H100), which flattered the custom kernel on the GELU rows (the vendor-baseline review).
     */
    private static void launchGelu(Problem p, Tensor y, Tensor bias, Activation act, Stream s) {
        int n = (int) y.numel();
        int blocks = geluBlocks(y.numel(), y.dtype(), Gpu.device(y.device()).info().smCount());
        String dt = y.dtype().name().toLowerCase(Locale.ROOT);
        if (bias == null) {
            GELU.function(s.cudaDevice(), "dwconv3x3_vendor_gelu_" + dt)
                    .launch(s, blocks, 1, 1, 256, 1, 1, 0, KernelArgs.begin().ptr(y).i32(n).i32(act.ordinal()));
        } else {
            int inner = p.layout() == Layout.NCHW ? p.outH() * p.outW() : 1;  // < n < 2^31
            GELU.function(s.cudaDevice(), "dwconv3x3_vendor_bias_gelu_" + dt).launch(s, blocks, 1, 1, 256, 1, 1, 0,
                    KernelArgs.begin().ptr(y).ptr(bias).i32(n).i32(p.c()).i32(inner).i32(act.ordinal()));
        }
    }

    /** The composition's own limits for {@code p} with {@code yElements} outputs: the GELU pass's 32-bit indexing. */
    static void checkPasses(Problem p, long yElements, int sms) {
        if (p.act() == Activation.GELU_ERF || p.act() == Activation.GELU_TANH) {
            geluBlocks(yElements, p.dtype(), sms);
        }
    }

    /** Blocks of the GELU pass over {@code n} output elements: scale_add's geometry ({@link Elementwise#vectorGridBlocks}, naming "x", whose size bounds y's). */
    static int geluBlocks(long n, DType dt, int sms) {
        return Elementwise.vectorGridBlocks("x", "elements of y in the vendor path's GELU pass", n, dt, sms);
    }

    /** A zero bias [C] for one call, allocated and zeroed in stream order on {@code s}; the caller closes it. */
    private static Tensor zeroBias(Problem p, Stream s) {
        Tensor z = Tensor.empty(s.device(), p.dtype(), s, p.c());
        try {
            z.fillBytes(0, s);
        } catch (RuntimeException | Error e) {
            dev.gapfill.core.Closing.closeAfter(e, z);
            throw e;
        }
        return z;
    }

    /** Destroys a plan's descriptors (the plan must no longer be in use). */
    static void destroy(Plan plan) {  // a descriptor not created (a failed build) is null or holds no address
        for (cudnnTensorStruct t : new cudnnTensorStruct[] {plan.xDesc, plan.yDesc, plan.biasDesc}) {
            if (t != null && !t.isNull()) {
                cudnnDestroyTensorDescriptor(t);
            }
        }
        if (plan.wDesc != null && !plan.wDesc.isNull()) {
            cudnnDestroyFilterDescriptor(plan.wDesc);
        }
        if (plan.conv != null && !plan.conv.isNull()) {
            cudnnDestroyConvolutionDescriptor(plan.conv);
        }
    }

    /**
     * The activation descriptor for {@code act}; null asks for IDENTITY. {@code d}: the device of the calling op, for a
     * failure's typed exception ({@link VendorHandles#checkDnn}).
     */
    private static synchronized cudnnActivationStruct activation(Activation act, CudaDevice d) {
        if (act == null) {
            if (identity == null) {
                identity = newActivation(CUDNN_ACTIVATION_IDENTITY, 0, d);
            }
            return identity;
        }
        return ACTS.computeIfAbsent(act, a -> {
            switch (a) {
                case RELU: return newActivation(CUDNN_ACTIVATION_RELU, 0, d);
                case RELU6: return newActivation(CUDNN_ACTIVATION_CLIPPED_RELU, 6.0, d);
                case SILU: return newActivation(CUDNN_ACTIVATION_SWISH, 0, d);  // β = 1 (below)
                default: throw new IllegalStateException("cuDNN has no activation for " + a);
            }
        });
    }

    /**
     * A new activation descriptor ({@code CUDNN_ACTIVATION_SWISH} with β = 1: SiLU). A failed setter destroys it again
     * before the typed exception is thrown: nothing is cached then, so it would leak at every retry.
     */
    private static cudnnActivationStruct newActivation(int mode, double coef, CudaDevice d) {
        cudnnActivationStruct a = new cudnnActivationStruct();
        VendorHandles.checkDnn(d, cudnnCreateActivationDescriptor(a), "cudnnCreateActivationDescriptor");
        try {
            VendorHandles.checkDnn(d, cudnnSetActivationDescriptor(a, mode, CUDNN_PROPAGATE_NAN, coef), "cudnnSetActivationDescriptor");
            if (mode == CUDNN_ACTIVATION_SWISH) {
                VendorHandles.checkDnn(d, cudnnSetActivationDescriptorSwishBeta(a, 1.0), "cudnnSetActivationDescriptorSwishBeta");
            }
        } catch (RuntimeException | Error e) {
            cudnnDestroyActivationDescriptor(a);  // its status is not checked: the setter's failure is the one the caller sees
            throw e;
        }
        return a;
    }

    private static int dnnType(DType dt) {
        switch (dt) {
            case F32: return CUDNN_DATA_FLOAT;
            case F16: return CUDNN_DATA_HALF;
            case BF16: return CUDNN_DATA_BFLOAT16;
            default: throw new IllegalArgumentException(dt.toString());
        }
    }

    /** The most workspace the algorithm search offers cuDNN; algorithms that need more are not tried. */
    private static final long FIND_WORKSPACE_CAP = 256L << 20;

    /**
     * Algorithms that sum the nine products of each output directly (GEMM-based or direct), so the vendor result meets the
     * op's accumulation bound. FFT and Winograd transform the inputs and carry larger errors: an H100 stress run (696ac97)
     * saw cuDNN's search pick one for single-channel F32 shapes, 2.5e-6 relative off the reference, outside the bound.
     */
    private static boolean summingAlgorithm(int algo) {
        return algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM || algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM
                || algo == CUDNN_CONVOLUTION_FWD_ALGO_GEMM || algo == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT;
    }

    /**
     * Builds the plan for {@code p}; the algorithm search writes {@code y} (or, when y holds the residual, a scratch
     * output of the same size) and reads x and w.
     */
    private static Plan build(Problem p, CudaDevice d, cudnnContext h, Tensor x, Tensor w, Tensor y, boolean yHoldsResidual, Stream s) {
        Plan plan = new Plan();
        try {
            return fill(plan, p, d, h, x, w, y, yHoldsResidual, s);
        } catch (RuntimeException | Error e) {  // nothing is cached: the descriptors made so far would leak at every retry
            destroy(plan);
            throw e;
        }
    }

    /** Creates {@code plan}'s descriptors and searches its algorithm ({@link #build}). */
    private static Plan fill(Plan plan, Problem p, CudaDevice d, cudnnContext h, Tensor x, Tensor w, Tensor y, boolean yHoldsResidual,
                             Stream s) {
        int type = dnnType(p.dtype());
        int format = p.layout() == Layout.NCHW ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
        plan.xDesc = new cudnnTensorStruct();
        plan.yDesc = new cudnnTensorStruct();
        plan.biasDesc = new cudnnTensorStruct();
        plan.wDesc = new cudnnFilterStruct();
        plan.conv = new cudnnConvolutionStruct();
        VendorHandles.checkDnn(d, cudnnCreateTensorDescriptor(plan.xDesc), "cudnnCreateTensorDescriptor");
        VendorHandles.checkDnn(d, cudnnCreateTensorDescriptor(plan.yDesc), "cudnnCreateTensorDescriptor");
        VendorHandles.checkDnn(d, cudnnCreateTensorDescriptor(plan.biasDesc), "cudnnCreateTensorDescriptor");
        VendorHandles.checkDnn(d, cudnnCreateFilterDescriptor(plan.wDesc), "cudnnCreateFilterDescriptor");
        VendorHandles.checkDnn(d, cudnnCreateConvolutionDescriptor(plan.conv), "cudnnCreateConvolutionDescriptor");
        VendorHandles.checkDnn(d, cudnnSetTensor4dDescriptor(plan.xDesc, format, type, p.n(), p.c(), p.h(), p.w()), "cudnnSetTensor4dDescriptor(x)");
        VendorHandles.checkDnn(d, cudnnSetTensor4dDescriptor(plan.yDesc, format, type, p.n(), p.c(), p.outH(), p.outW()),
                "cudnnSetTensor4dDescriptor(y)");
        VendorHandles.checkDnn(d, cudnnSetTensor4dDescriptor(plan.biasDesc, CUDNN_TENSOR_NCHW, type, 1, p.c(), 1, 1),
                "cudnnSetTensor4dDescriptor(bias)");
        // KCRS (NCHW) and KRSC (NHWC) with C/groups = 1 are both the [C,3,3] memory of w.
        VendorHandles.checkDnn(d, cudnnSetFilter4dDescriptor(plan.wDesc, type, format, p.c(), 1, 3, 3), "cudnnSetFilter4dDescriptor");
        VendorHandles.checkDnn(d, cudnnSetConvolution2dDescriptor(plan.conv, 1, 1, p.stride(), p.stride(), 1, 1, CUDNN_CROSS_CORRELATION,
                CUDNN_DATA_FLOAT), "cudnnSetConvolution2dDescriptor");
        VendorHandles.checkDnn(d, cudnnSetConvolutionGroupCount(plan.conv, p.c()), "cudnnSetConvolutionGroupCount");
        int math = p.dtype() == DType.F32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
        VendorHandles.checkDnn(d, cudnnSetConvolutionMathType(plan.conv, math), "cudnnSetConvolutionMathType");
        int[] dims = new int[4];
        int[] on = new int[1], oc = new int[1], oh = new int[1], ow = new int[1];
        VendorHandles.checkDnn(d, cudnnGetConvolution2dForwardOutputDim(plan.conv, plan.xDesc, plan.wDesc, on, oc, oh, ow),
                "cudnnGetConvolution2dForwardOutputDim");
        dims[0] = on[0];
        dims[1] = oc[0];
        dims[2] = oh[0];
        dims[3] = ow[0];
        if (dims[0] != p.n() || dims[1] != p.c() || dims[2] != p.outH() || dims[3] != p.outW()) {
            throw new GapfillException("internal: cuDNN output dims " + java.util.Arrays.toString(dims) + " differ from ceil(H/s) for " + p);
        }
        int count = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
        // The search runs every candidate on the call's own operands (cuDNN's non-Ex search would run them on buffers
        // it allocates and never initialises), with the largest workspace any candidate asks for, up to the cap.
        long wsBytes = 0;
        try (SizeTPointer size = new SizeTPointer(1)) {
            for (int algo = 0; algo < count; algo++) {
                if (!summingAlgorithm(algo)) {
                    continue;
                }
                if (cudnnGetConvolutionForwardWorkspaceSize(h, plan.xDesc, plan.wDesc, plan.conv, plan.yDesc, algo, size)
                        == CUDNN_STATUS_SUCCESS && size.get() <= FIND_WORKSPACE_CAP) {
                    wsBytes = Math.max(wsBytes, size.get());
                }
            }
        }
        try (cudnnConvolutionFwdAlgoPerf_t perf = new cudnnConvolutionFwdAlgoPerf_t(count);
             Tensor ws = wsBytes > 0 ? Tensor.empty(s.device(), DType.I8, s, wsBytes) : null;
             // one vector more, so the search's output can sit at y's own offset from 16 bytes (the plan is kept for
             // y's alignment: a scratch at the pool's 256-byte alignment would choose for aligned memory)
             Tensor scratchY = yHoldsResidual ? Tensor.empty(s.device(), y.dtype(), s, y.numel() + 16 / y.dtype().bytes()) : null) {
            int[] returned = new int[1];
            Tensor searchY = scratchY == null ? y
                    : scratchY.strided(new long[] {y.numel()}, new long[] {1}, (y.address() & 15) / y.dtype().bytes());
            // Initcheck mode: the trial output and workspace are uninitialised here, so they are zeroed for the tool. The one
            // report left after that (a 2-byte read in a trial kernel) sits, by its address, one element past the end of
            // the filter: docs/reliability.md; the logged ranges below are there to confirm it.
            InitcheckAid.beforeVendorWrite(searchY, s);
            InitcheckAid.beforeVendorWrite(ws, s);
            if (InitcheckAid.enabled()) {
                InitcheckAid.describe("cudnnFindConvolutionForwardAlgorithmEx(" + p + ")", "x", x, "w", w, "y", searchY, "workspace", ws);
            }
            VendorHandles.checkDnn(d, cudnnFindConvolutionForwardAlgorithmEx(h, plan.xDesc, new DevicePointer(x.address()), plan.wDesc,
                    new DevicePointer(w.address()), plan.conv, plan.yDesc, new DevicePointer(searchY.address()), count, returned, perf,
                    ws == null ? null : new DevicePointer(ws.address()), wsBytes), "cudnnFindConvolutionForwardAlgorithmEx(" + p + ")");
            int chosen = -1;
            for (int i = 0; i < returned[0]; i++) {
                cudnnConvolutionFwdAlgoPerf_t r = new cudnnConvolutionFwdAlgoPerf_t(perf).position(i);
                // F32 must not run on TF32 tensor cores: only FMA-math results qualify.
                boolean mathOk = p.dtype() != DType.F32 || r.mathType() == CUDNN_FMA_MATH;
                if (r.status() == CUDNN_STATUS_SUCCESS && mathOk && summingAlgorithm(r.algo())) {
                    chosen = i;
                    plan.algo = r.algo();
                    plan.mathType = r.mathType();
                    plan.workspaceBytes = r.memory();
                    plan.findMs = r.time();
                    break;
                }
            }
            if (chosen < 0) {
                throw new GapfillException("cuDNN found no forward algorithm for the grouped convolution " + p
                        + " (" + returned[0] + " candidates, none succeeded with the required math type)");
            }
        }
        VendorHandles.checkDnn(d, cudnnSetConvolutionMathType(plan.conv, plan.mathType), "cudnnSetConvolutionMathType(chosen)");
        return plan;
    }
}
