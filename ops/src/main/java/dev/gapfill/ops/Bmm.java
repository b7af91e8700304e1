package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.Checks;
import dev.gapfill.core.Closing;
import dev.gapfill.core.CudaDevice;
import dev.gapfill.core.DType;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.DevicePointer;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.InitcheckAid;
import dev.gapfill.core.KernelArgs;
import dev.gapfill.core.KernelModule;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.UnsupportedShapeException;
import dev.gapfill.core.VendorHandles;
import dev.gapfill.ops.reference.BmmReference;
import org.bytedeco.cuda.cublas.cublasContext;
import org.bytedeco.cuda.global.cublas;
import org.bytedeco.cuda.global.cudart;

import java.lang.ref.Reference;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * Batched matrix multiply: {@code C[b] = op(A[b]) · op(B[b])} for b in [0, batch).
 *
 * <pre>
 *   A: [batch, m, k]   ([batch, k, m] with transposeA)
 *   B: [batch, k, n]   ([batch, n, k] with transposeB), or [k, n] / [n, k] shared by the whole batch
 *   C: [batch, m, n]
 *   batch = number of matrices, m = rows of C, n = columns of C, k = reduction length
 * </pre>
 *
 * <p>Dtypes: F16 and BF16 (fp32 accumulation, one rounding to the input dtype), F32 (exact fp32
 * arithmetic by default; {@link Precision#TF32} lets the vendor path use TF32 tensor cores). All
 * tensors on one device, same dtype, contiguous row-major. Tensors on the CPU run the fp64 reference.
 *
 * <p>Paths: VENDOR = {@code cublasGemmStridedBatchedEx} (row-major through C^T = B^T·A^T; a shared B
 * with A not transposed is one {@code cublasGemmEx} with m' = batch·m); CUSTOM = {@code bmm/bmm_small}
 * for m, n, k ≤ 128 (several matrices per block, tensor-core mma.sync for F16/BF16, FFMA in a fixed
 * k order for F32), or {@code bmm/bmm_team} (persistent warp teams streaming groups of matrices; the
 * same arithmetic) where {@link BmmHeuristics#useTeam} says it is faster and A, B, C start on 16 bytes, or
 * {@code bmm/bmm_frag} for F16/BF16 with m, n, k ≤ 16 and even row lengths (operands loaded straight into mma
 * fragments; any alignment; F32 with m, n, k ≤ 16 and neither operand transposed by in-order FFMA), and its
 * {@code bmm_frag32_*} entries for F16/BF16 up to 32 with even row lengths and B per matrix (one to four warps per
 * matrix; {@link BmmHeuristics#useFrag32}), and {@code bmm/bmm_gemv} for m = 1 or n = 1 above 16 with 16-byte aligned
 * tensors (a batched matrix-vector product that streams the matrix once; {@link BmmHeuristics#useGemv}), and on
 * compute capability 9.0 {@code bmm/bmm_wg} for F16/BF16 with m, n, k ≤ 128, B per matrix, A, B and C on 16 bytes, the
 * stored row lengths and n multiples of 4 and each operand a multiple of 16 bytes (warpgroup MMA, {@code wgmma}, which
 * reads both operands from 128-byte-swizzled shared-memory tiles: one matrix per block of two warpgroups at a time, the
 * next matrix's copy in flight while the current one computes; its only real image is the sm_90a SASS), from
 * {@link BmmHeuristics#WG_MIN_WARP_TILES} output tiles of 32 × 32 ({@link BmmHeuristics#WG_EIGHT_BYTE_MIN_WARP_TILES}
 * where the rows are 8-byte but not 16-byte multiples; {@link BmmHeuristics#useWg}).
 * AUTO asks {@link BmmHeuristics}.
 *
 * @throws ArgumentException          on invalid arguments (named), before anything is launched
 * @throws UnsupportedShapeException  when CUSTOM is forced on a shape the custom kernels do not take
 */
public final class Bmm {
    private static final Set<DType> DTYPES = EnumSet.of(DType.F32, DType.F16, DType.BF16);
    private static final KernelModule MODULE = KernelModule.of("bmm/bmm_small");
    private static final KernelModule TEAM_MODULE = KernelModule.of("bmm/bmm_team");
    private static final KernelModule FRAG_MODULE = KernelModule.of("bmm/bmm_frag");
    private static final KernelModule WG_MODULE = KernelModule.of("bmm/bmm_wg");
    private static final KernelModule GEMV_MODULE = KernelModule.of("bmm/bmm_gemv");
    // Host scalars for cuBLAS (pointer mode host), allocated once and never written after.

    /** Arithmetic of F32 problems. */
    public enum Precision {
        /** fp32 multiply-adds (default). */
        EXACT,
        /** TF32 tensor cores allowed (10-bit mantissa products) on the vendor path; the custom kernel stays exact. */
        TF32
    }

    /**
     * Per-call options; {@link #defaults()} then the withers: {@code Bmm.Options.defaults().transposeB().backend(Backend.CUSTOM)}.
     *
     * @param transA     A is stored as {@code [batch, k, m]}
     * @param transB     B is stored as {@code [batch, n, k]} (or {@code [n, k]} shared)
     * @param precision  F32 arithmetic
     * @param backend    AUTO, VENDOR or CUSTOM ({@link Backend#resolve} applies the global property)
     */
    public record Options(boolean transA, boolean transB, Precision precision, Backend backend) {
        public Options {
            if (precision == null) {
                throw new ArgumentException("options.precision", "EXACT or TF32", "null");
            }
            if (backend == null) {
                throw new ArgumentException("options.backend", "one of AUTO, VENDOR, CUSTOM", "null");
            }
        }

        public static Options defaults() {
            return new Options(false, false, Precision.EXACT, Backend.AUTO);
        }

        public Options transposeA() { return new Options(true, transB, precision, backend); }

        public Options transposeB() { return new Options(transA, true, precision, backend); }

        public Options transposes(boolean a, boolean b) { return new Options(a, b, precision, backend); }

        public Options tf32() { return new Options(transA, transB, Precision.TF32, backend); }

        public Options precision(Precision p) { return new Options(transA, transB, p, backend); }

        public Options backend(Backend b) { return new Options(transA, transB, precision, b); }
    }

    private Bmm() {}

    /** {@code A·B} into a new tensor with default options, on the per-thread stream. */
    public static Tensor bmm(Tensor a, Tensor b) {
        return bmm(a, b, Options.defaults());
    }

    /** {@code op(A)·op(B)} into a new tensor {@code [batch, m, n]}, on the per-thread stream. */
    public static Tensor bmm(Tensor a, Tensor b, Options options) {
        BmmShape s = validate(a, b, null, options);
        // the decision's own refusals (CUSTOM or REFERENCE forced where they do not apply) before the allocation; the new
        // output starts on 256 bytes (pool memory), so A's and B's alignment is the call's
        Decision planned = a.device().isCpu() ? null
                : decide(s, Gpu.device(a.device()).info(), options.backend(), alignment(a.address(), b.address()));
        Tensor out = Tensor.empty(a.device(), a.dtype(), s.batch(), s.m(), s.n());
        try {
            run(s, a, b, out, options, null, planned);
        } catch (RuntimeException | Error e) {  // an Error too (JavaCPP's or the heap's OutOfMemoryError): no leaked output
            Closing.closeAfter(e, out);
            throw e;
        }
        return out;
    }

    /**
     * {@code out = op(A)·op(B)} on {@code stream} (null: the per-thread stream). {@code out} must be
     * {@code [batch, m, n]}, contiguous, of the inputs' dtype and device, and must not overlap them.
     */
    public static void bmm(Tensor a, Tensor b, Tensor out, Options options, Stream stream) {
        BmmShape s = validate(a, b, out, options);
        Checks.open("out", out);  // validate() takes a null out (shape only); this overload needs one
        run(s, a, b, out, options, stream);
    }

    /** The decision a call with these arguments would take, without running anything. */
    public static Decision decide(Tensor a, Tensor b, Options options) {
        BmmShape s = validate(a, b, null, options);
        if (a.device().isCpu()) {
            return Decision.reference();
        }
        return decide(s, Gpu.device(a.device()).info(), options.backend(), alignment(a.address(), b.address()));
    }

    /**
     * The decision {@link #bmm(Tensor, Tensor, Tensor, Options, Stream)} would take into {@code out}, without running
     * anything: as {@link #decide(Tensor, Tensor, Options)}, with out's alignment counted as well (a caller's view that
     * starts off 16 bytes keeps some kernels out). {@code out} is validated as that call validates it.
     */
    public static Decision decide(Tensor a, Tensor b, Tensor out, Options options) {
        BmmShape s = validate(a, b, out, options);
        Checks.open("out", out);
        if (a.device().isCpu()) {
            return Decision.reference();
        }
        return decide(s, Gpu.device(a.device()).info(), options.backend(), alignment(a.address(), b.address(), out.address()));
    }

    /**
     * The decision for a problem on a device (pure; what {@link #decide(Tensor, Tensor, Options)} uses). A null
     * {@code shape} or {@code info} is refused by name before anything else; a null or REFERENCE {@code requested} as
     * the tensor overloads refuse it in their options ("options.backend": the reference runs for CPU tensors only).
     */
    public static Decision decide(BmmShape shape, DeviceInfo info, Backend requested) {
        if (shape == null) {
            throw new ArgumentException("shape", "a BmmShape", "null");
        }
        if (info == null) {
            throw new ArgumentException("info", "a DeviceInfo", "null");
        }
        if (requested == null) {  // Backend.resolve would name it "backend"; Options and the REFERENCE refusal say "options.backend"
            throw new ArgumentException("options.backend", "one of AUTO, VENDOR, CUSTOM", "null");
        }
        return decide(shape, info, requested, true);
    }

    /** As {@link #decide(BmmShape, DeviceInfo, Backend)}; {@code aligned16}: A, B and C all start on 16 bytes. */
    static Decision decide(BmmShape s, DeviceInfo info, Backend requested, boolean aligned16) {
        return decide(s, info, requested, aligned16 ? 16 : 0);
    }

    /** As {@link #decide(BmmShape, DeviceInfo, Backend)}; {@code align}: the largest of 16 and 8 that A, B and C all start on, else 0. */
    static Decision decide(BmmShape s, DeviceInfo info, Backend requested, int align) {
        switch (Backend.resolve(requested)) {
            case VENDOR:
                return BmmHeuristics.vendor(s, "forced by the caller or gapfill.backend");
            case CUSTOM: {
                String why = BmmHeuristics.customUnsupportedReason(s, info);
                if (why != null) {
                    throw new UnsupportedShapeException("backend", "a shape the custom kernels take (" + why + "; use AUTO or VENDOR)",
                            "CUSTOM on " + s);
                }
                return BmmHeuristics.custom(s, info, "forced by the caller or gapfill.backend", align);
            }
            case REFERENCE:
                throw new ArgumentException("options.backend", "AUTO, VENDOR or CUSTOM for device tensors (the reference runs for CPU tensors)",
                        "REFERENCE");
            default:
                return BmmHeuristics.decide(s, info, align);
        }
    }

    // ------------------------------------------------------------------ validation

    /** Checks every argument and returns the problem; nothing is launched. */
    public static BmmShape validate(Tensor a, Tensor b, Tensor out, Options options) {
        if (options == null) {
            throw new ArgumentException("options", "Bmm.Options (Bmm.Options.defaults())", "null");
        }
        Checks.open("a", a);
        Checks.open("b", b);
        Checks.dtype("a", a, DTYPES);
        Checks.dtype("b", b, a.dtype());
        Checks.rank("a", a, 3);
        Checks.rank("b", b, 2, 3);
        Checks.sameDevice("b", b, a.device());
        Checks.contiguous("a", a);
        Checks.contiguous("b", b);
        long batch = a.dim(0);
        long m = options.transA() ? a.dim(2) : a.dim(1);
        long k = options.transA() ? a.dim(1) : a.dim(2);
        boolean shared = b.rank() == 2;
        String bLegend = (shared ? "" : "batch, ") + (options.transB() ? "n, k" : "k, n");
        long n;
        if (shared) {
            n = options.transB() ? b.dim(0) : b.dim(1);
            Checks.shape("b", b, bLegend, options.transB() ? new long[] {-1, k} : new long[] {k, -1});
        } else {
            n = options.transB() ? b.dim(1) : b.dim(2);
            Checks.shape("b", b, bLegend, options.transB() ? new long[] {batch, -1, k} : new long[] {batch, k, -1});
        }
        if (options.precision() == Precision.TF32 && a.dtype() != DType.F32) {
            throw new ArgumentException("options.precision", "EXACT for " + a.dtype() + " (TF32 applies to F32 only)", "TF32");
        }
        Checks.int32Indexable("a", a);
        Checks.int32Indexable("b", b);
        if (batch * m * n > Integer.MAX_VALUE) {
            throw new ArgumentException("out", "at most 2^31-1 elements (32-bit indexing)", batch * m * n + " elements");
        }
        if (out != null) {
            Checks.open("out", out);
            Checks.dtype("out", out, a.dtype());
            Checks.sameDevice("out", out, a.device());
            Checks.shape("out", out, "batch, m, n", batch, m, n);
            Checks.contiguous("out", out);
            Checks.noOverlap("out", out, "a", a);
            Checks.noOverlap("out", out, "b", b);
        }
        return new BmmShape(a.dtype(), batch, m, n, k, options.transA(), options.transB(), shared, options.precision());
    }

    // ------------------------------------------------------------------ execution

    private static void run(BmmShape s, Tensor a, Tensor b, Tensor out, Options options, Stream stream) {
        run(s, a, b, out, options, stream, null);
    }

    /** {@code planned}: the decision made before {@code out} was allocated (null: decide here), for A's and B's alignment. */
    private static void run(BmmShape s, Tensor a, Tensor b, Tensor out, Options options, Stream stream, Decision planned) {
        if (a.device().isCpu()) {
            BmmReference.compute(a, b, out, s.transA(), s.transB());
            return;
        }
        Stream st = OpStreams.pick(a.device(), stream);
        CudaDevice dev = st.cudaDevice();
        int align = alignment(a.address(), b.address(), out.address());
        Decision d = planned != null && align == alignment(a.address(), b.address()) ? planned : decide(s, dev.info(), options.backend(), align);
        OpStreams.record(st, a, b, out);  // before the launches: work already queued orders the frees if a later one fails
        try {
            if (d.backend() == Backend.CUSTOM && d.variant().startsWith("frag_")) {
                runFrag(s, a, b, out, st, dev.info());
            } else if (d.backend() == Backend.CUSTOM && d.variant().startsWith("gemv_")) {
                runGemv(s, a, b, out, st);
            } else if (d.backend() == Backend.CUSTOM && d.variant().startsWith("frag32_")) {
                runFrag32(s, a, b, out, st, dev.info());
            } else if (d.backend() == Backend.CUSTOM && d.variant().startsWith("wg_")) {
                runWg(s, a, b, out, st, dev.info());
            } else if (d.backend() == Backend.CUSTOM && d.variant().startsWith("team_")) {
                runTeam(s, a, b, out, st, dev.info(), "bmm_team_");
            } else if (d.backend() == Backend.CUSTOM && d.variant().startsWith("team8_")) {
                runTeam(s, a, b, out, st, dev.info(), "bmm_team8_");
            } else if (d.backend() == Backend.CUSTOM) {
                runCustom(s, a, b, out, st, dev.info());
            } else {
                runVendor(s, a, b, out, st);
            }
        } finally {  // the tensors stay reachable until every launch is queued: their cleaner must not free them before (recorded above)
            Reference.reachabilityFence(a);
            Reference.reachabilityFence(b);
            Reference.reachabilityFence(out);
        }
    }

    private static void runCustom(BmmShape s, Tensor a, Tensor b, Tensor out, Stream st, DeviceInfo info) {
        BmmHeuristics.Plan p = BmmHeuristics.plan(s, info);
        String symbol = "bmm_small_" + s.dtype().name().toLowerCase(Locale.ROOT) + "_" + (s.transA() ? "t" : "n") + (s.transB() ? "t" : "n");
        MODULE.function(st.cudaDevice(), symbol).launch(st, p.grid(), 1, 1, p.threads(), 1, 1, p.smemBytes(),
                KernelArgs.begin().ptr(a).ptr(b).ptr(out).i32((int) s.batch()).i32((int) s.m()).i32((int) s.n()).i32((int) s.k())
                        .i32(p.mats()).i32(s.sharedB() ? 1 : 0));
    }

    private static void runFrag(BmmShape s, Tensor a, Tensor b, Tensor out, Stream st, DeviceInfo info) {
        BmmHeuristics.FragPlan p = BmmHeuristics.fragPlan(s, info);
        String symbol = "bmm_frag_" + s.dtype().name().toLowerCase(Locale.ROOT) + "_" + (s.transA() ? "t" : "n") + (s.transB() ? "t" : "n");
        if (s.dtype() == DType.F32) {  // one entry per variant (bmm_frag.cu): s8 or s16, matrices per warp
            symbol += "_s" + (BmmHeuristics.fragF32Small(s) ? 8 : 16) + "_w" + p.matsPerWarp();
        } else if (BmmHeuristics.fragRows(s, 16, b.address(), out.address())) {
            symbol += "_rows";  // B and C in row chunks: the same bits, fewer memory instructions
        }
        FRAG_MODULE.function(st.cudaDevice(), symbol).launch(st, p.grid(), 1, 1, p.threads(), 1, 1, 0,
                KernelArgs.begin().ptr(a).ptr(b).ptr(out).i32((int) s.batch()).i32((int) s.m()).i32((int) s.n()).i32((int) s.k())
                        .i32(p.matsPerWarp()).i32(s.sharedB() ? 1 : 0));
    }

    private static void runFrag32(BmmShape s, Tensor a, Tensor b, Tensor out, Stream st, DeviceInfo info) {
        BmmHeuristics.Frag32Plan p = BmmHeuristics.frag32Plan(s, info);
        boolean rows = BmmHeuristics.fragRows(s, BmmHeuristics.frag32SliceColumns(p.warpsPerMatrix()), b.address(), out.address());
        String symbol = "bmm_frag32_" + s.dtype().name().toLowerCase(Locale.ROOT) + "_" + (s.transA() ? "t" : "n") + (s.transB() ? "t" : "n")
                + (rows ? "_rows" : "") + "_w" + p.warpsPerMatrix();
        FRAG_MODULE.function(st.cudaDevice(), symbol).launch(st, p.grid(), 1, 1, p.threads(), 1, 1, 0,
                KernelArgs.begin().ptr(a).ptr(b).ptr(out).i32((int) s.batch()).i32((int) s.m()).i32((int) s.n()).i32((int) s.k())
                        .i32(1).i32(s.sharedB() ? 1 : 0));
    }

    /** bmm_gemv (m = 1 or n = 1), in {@link BmmHeuristics#gemvPlan}: the matrix operand, the vector, C. */
    private static void runGemv(BmmShape s, Tensor a, Tensor b, Tensor out, Stream st) {
        BmmHeuristics.GemvPlan p = BmmHeuristics.gemvPlan(s);
        String symbol = "bmm_gemv_" + s.dtype().name().toLowerCase(Locale.ROOT) + "_" + p.kind();
        KernelArgs args = KernelArgs.begin().ptr(p.matrixIsA() ? a : b).ptr(p.matrixIsA() ? b : a).ptr(out).i32((int) s.batch())
                .i32(p.rows()).i32((int) s.k()).i64(p.matrixStride()).i64(p.vectorStride());
        if (p.kind().endsWith("_warp")) {
            args.i32(p.log2Chunks());
        }
        GEMV_MODULE.function(st.cudaDevice(), symbol).launch(st, p.grid(), 1, 1, p.threads(), 1, 1, 0, args);
    }

    /** bmm_team ({@code prefix} "bmm_team_") or its 8-byte-copy twin ("bmm_team8_", F16/BF16), in {@link BmmHeuristics#teamPlan}. */
    private static void runTeam(BmmShape s, Tensor a, Tensor b, Tensor out, Stream st, DeviceInfo info, String prefix) {
        BmmHeuristics.TeamPlan p = BmmHeuristics.teamPlan(s, info);
        String symbol = prefix + s.dtype().name().toLowerCase(Locale.ROOT) + "_" + (s.transA() ? "t" : "n") + (s.transB() ? "t" : "n");
        TEAM_MODULE.function(st.cudaDevice(), symbol).launch(st, p.grid(), 1, 1, p.threads(), 1, 1, p.smemBytes(),
                KernelArgs.begin().ptr(a).ptr(b).ptr(out).i32((int) s.batch()).i32((int) s.m()).i32((int) s.n()).i32((int) s.k())
                        .i32(p.mats()).i32(p.stages()).i32(p.teamWarps()).i32(p.directC() ? 1 : 0));
    }

    /** bmm_wg (wgmma, sm_90a), in {@link BmmHeuristics#wgPlan}. */
    private static void runWg(BmmShape s, Tensor a, Tensor b, Tensor out, Stream st, DeviceInfo info) {
        BmmHeuristics.WgPlan p = BmmHeuristics.wgPlan(s, info);
        String symbol = "bmm_wg_" + s.dtype().name().toLowerCase(Locale.ROOT) + "_" + (s.transA() ? "t" : "n") + (s.transB() ? "t" : "n");
        WG_MODULE.function(st.cudaDevice(), symbol).launch(st, p.grid(), 1, 1, p.threads(), 1, 1, p.smemBytes(),
                KernelArgs.begin().ptr(a).ptr(b).ptr(out).i32((int) s.batch()).i32((int) s.m()).i32((int) s.n()).i32((int) s.k()));
    }
    /** 16 when every address is a multiple of 16, else 8 when every one is a multiple of 8, else 0. */
    static int alignment(long... addresses) {
        long or = 0;
        for (long x : addresses) {
            or |= x;
        }
        return (or & 15) == 0 ? 16 : (or & 7) == 0 ? 8 : 0;
    }

    /**
     * cuBLAS is column-major: a row-major X [r, c] is its column-major X^T with ld = c. So
     * C^T [n, m] = op(B)^T · op(A)^T is computed with cuBLAS's "A" = B and "B" = A.
     */
    private static void runVendor(BmmShape s, Tensor a, Tensor b, Tensor out, Stream st) {
        CudaDevice dev = st.cudaDevice();
        cublasContext h = VendorHandles.cublas(st);
        int type = cudaType(s.dtype());
        // The handle is shared by every op on this thread: state the math mode on each call so that
        // neither TF32 (for EXACT F32) nor pedantic math (slower half paths) leaks in from elsewhere, and
        // split-K partials of F16/BF16 are reduced in fp32 (VendorHandles.CUBLAS_MATH_MODE).
        int rcMode = cublas.cublasSetMathMode(h, VendorHandles.CUBLAS_MATH_MODE);
        if (rcMode != 0) {
            VendorHandles.checkBlas(dev, rcMode, "cublasSetMathMode");
        }
        // Tensor-op math is cuBLAS's default for 16-bit inputs with fp32 compute.
        int compute = s.dtype() == DType.F32 && s.precision() == Precision.TF32 ? cublas.CUBLAS_COMPUTE_32F_FAST_TF32 : cublas.CUBLAS_COMPUTE_32F;
        int m = (int) s.m();
        int n = (int) s.n();
        int k = (int) s.k();
        int opB = s.transB() ? cublas.CUBLAS_OP_T : cublas.CUBLAS_OP_N;
        int opA = s.transA() ? cublas.CUBLAS_OP_T : cublas.CUBLAS_OP_N;
        int ldb = s.transB() ? k : n;
        int lda = s.transA() ? m : k;
        DevicePointer pa = new DevicePointer(a.address());
        DevicePointer pb = new DevicePointer(b.address());
        DevicePointer pc = new DevicePointer(out.address());
        InitcheckAid.beforeVendorWrite(out, st);
        if (s.sharedB() && !s.transA() && s.batch() * s.m() <= Integer.MAX_VALUE) {
            int rows = (int) (s.batch() * s.m());  // A as one [batch*m, k] row-major matrix
            int rc = cublas.cublasGemmEx(h, opB, cublas.CUBLAS_OP_N, n, rows, k, HostConstants.ONE_F32, pb, type, ldb, pa, type, k, HostConstants.ZERO_F32, pc, type, n,
                    compute, cublas.CUBLAS_GEMM_DEFAULT);
            if (rc != 0) {  // the message is built only on failure: nothing allocated per call on the hot path
                VendorHandles.checkBlas(dev, rc, "cublasGemmEx(bmm folded " + s + ")");
            }
            return;
        }
        int rc = cublas.cublasGemmStridedBatchedEx(h, opB, opA, n, m, k, HostConstants.ONE_F32, pb, type, ldb, s.sharedB() ? 0L : (long) k * n, pa, type,
                lda, (long) m * k, HostConstants.ZERO_F32, pc, type, n, (long) m * n, (int) s.batch(), compute, cublas.CUBLAS_GEMM_DEFAULT);
        if (rc != 0) {
            VendorHandles.checkBlas(dev, rc, "cublasGemmStridedBatchedEx(bmm " + s + ")");
        }
    }

    private static int cudaType(DType dt) {
        switch (dt) {
            case F16: return cudart.CUDA_R_16F;
            case BF16: return cudart.CUDA_R_16BF;
            default: return cudart.CUDA_R_32F;
        }
    }
}
