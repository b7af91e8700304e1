package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.Checks;
import dev.gapfill.core.Closing;
import dev.gapfill.core.Cleanup;
import dev.gapfill.core.CudaDevice;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.DevicePointer;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.InitcheckAid;
import dev.gapfill.core.KernelArgs;
import dev.gapfill.core.KernelFunction;
import dev.gapfill.core.KernelModule;
import dev.gapfill.core.Pointers;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.UnsupportedShapeException;
import dev.gapfill.core.VendorHandles;
import dev.gapfill.ops.reference.Int8MmReference;
import org.bytedeco.cuda.cublas.cublasLtMatmulDescOpaque_t;
import org.bytedeco.cuda.cublas.cublasLtMatmulHeuristicResult_t;
import org.bytedeco.cuda.cublas.cublasLtMatmulPreferenceOpaque_t;
import org.bytedeco.cuda.cublas.cublasLtMatrixLayoutOpaque_t;
import org.bytedeco.cuda.global.cublas;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.PointerPointer;

import java.lang.ref.Reference;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * W8A8 int8 matrix product for linear layers, with fused dequantization.
 *
 * <p>{@code acc[m,n] = Σ_k A[m,k]·W[n,k]}; output {@code acc} (I32) or
 * {@code out[m,n] = acc[m,n]·aScale[m]·wScale[n] (+ bias[n])} (F32, F16, BF16).
 * <br>Legend: A: [M, K] I8 activations; W: [N, K] I8 weights (the layout a linear layer stores; both
 * K-contiguous); aScale: [M] per-token or [1] scalar, F32; wScale: [N] per-channel or [1] scalar, F32;
 * bias: [N] F32 or absent (F32 whatever the output dtype: it enters the fp64 epilogue exactly); out: [M, N]
 * row-major.
 *
 * <p>Constraints (validated before any launch, {@link ArgumentException} naming the argument): I8 inputs of
 * rank 2, contiguous, one device; K a multiple of 16 and at most {@link #MAX_K} (so that |acc| &lt; 2^31:
 * I32 results are exact, never wrapped); M·K, N·K, M·N below 2^31 (for the vendor path's dequantization pass, M·N
 * plus its grid stride); on a GPU, A, W and out 16-byte aligned, and out not overlapping A, W, aScale, wScale or bias.
 * Any M ≥ 1, any N ≥ 1.
 *
 * <p>Results: the I32 output is exact on every path. Float outputs are computed from the exact acc in fp64
 * ({@code s = aScale·wScale} exact, {@code acc·s} and {@code + bias} each one fp64 rounding) and rounded once
 * to the output dtype — identical bits on the CPU reference, the custom kernels and the vendor composition.
 *
 * <p>Paths: VENDOR is cuBLASLt (int8 TN, {@code CUBLAS_COMPUTE_32I}, I32 out; algorithm chosen once per shape
 * and cached) plus one scaling kernel for float outputs. CUSTOM is Gapfill's skinny kernel for M ≤ 64 (int8
 * {@code mma.sync}, weights streamed once, split-K, epilogue fused); CUSTOM with M &gt; 64 throws
 * {@link UnsupportedShapeException}. AUTO follows {@link Int8MmHeuristics#decide}; the system property
 * {@value Backend#PROPERTY} overrides it. Tensors on the CPU run {@link Int8MmReference}.
 *
 * <p>Memory: {@link #plan} allocates once what a shape needs (split-K workspace, cuBLASLt workspace, the
 * vendor's int32 temporary), from the device's stream-ordered pool, and {@link Plan#run} allocates nothing.
 * The one-shot {@link #mm} overloads keep the plans they make per thread (up to 8 and 8 MiB), so a repeated problem
 * on the same stream allocates nothing either (beyond the output of the overloads that return a new tensor);
 * {@link dev.gapfill.core.Resources#release} closes them. A plan held
 * across a release keeps working (its cuBLASLt descriptors outlive the cache entry until the plan closes).
 */
public final class Int8Mm {
    /** Largest K: 128·128·K stays below 2^31 (the largest product, (−128)·(−128) = 16384), and K is a multiple of 16. */
    public static final long MAX_K = 131056;

    static final Set<DType> OUT_DTYPES = EnumSet.of(DType.I32, DType.F32, DType.F16, DType.BF16);
    private static final KernelModule SKINNY = KernelModule.of("int8_mm/skinny_mma");
    private static final KernelModule DEQUANT = KernelModule.of("int8_mm/dequant");
    private static final long LT_MAX_WORKSPACE = 32L << 20;
    static final Map<String, LtAlgo> LT_CACHE = new ConcurrentHashMap<>();  // released by OpCaches
    // cuBLASLt's alpha and beta (int32 scale type, pointer mode host): read at the call, never written, so shared by
    // every thread instead of two native allocations per call

    private Int8Mm() {}

    /**
     * Per-call options: output dtype, scales and bias (float outputs), backend.
     *
     * @param out     I32 (no scales), or F32 / F16 / BF16 (scales required)
     * @param aScale  [M] or [1] F32, or null for I32
     * @param wScale  [N] or [1] F32, or null for I32
     * @param bias    [N] F32, or null
     * @param backend AUTO, VENDOR or CUSTOM
     */
    public record Options(DType out, Tensor aScale, Tensor wScale, Tensor bias, Backend backend) {
        public Options {
            if (out == null || !OUT_DTYPES.contains(out)) {
                throw new ArgumentException("out", "an output dtype in " + OUT_DTYPES, String.valueOf(out));
            }
            if (backend == null) {
                throw new ArgumentException("backend", "one of AUTO, VENDOR, CUSTOM", "null");
            }
        }

        /** I32 output, AUTO backend. */
        public static Options int32() { return new Options(DType.I32, null, null, null, Backend.AUTO); }

        /** Dequantized output in {@code out}: per-token (or scalar) aScale, per-channel (or scalar) wScale. */
        public static Options dequantized(DType out, Tensor aScale, Tensor wScale) {
            return new Options(out, aScale, wScale, null, Backend.AUTO);
        }

        public Options withBias(Tensor b) { return new Options(out, aScale, wScale, b, backend); }

        public Options withBackend(Backend b) { return new Options(out, aScale, wScale, bias, b); }
    }

    /** The problem dimensions after validation. */
    record Shape(long m, long n, long k) {}

    // ------------------------------------------------------------------ one-shot API

    /** {@code acc = A·Wᵀ} as a new I32 tensor [M, N], on the per-thread stream. */
    public static Tensor mm(Tensor a, Tensor w) {
        return mm(a, w, Options.int32());
    }

    /** A new [M, N] tensor of {@code o.out()} on the per-thread stream. */
    public static Tensor mm(Tensor a, Tensor w, Options o) {
        Shape s = validate(a, w, o, null);
        if (!a.device().isCpu()) {
            planChecks(s, o, Gpu.device(a.device()).info());  // the path's own refusals before the allocation
        }
        Tensor out = Tensor.empty(a.device(), o.out(), s.m(), s.n());
        try {
            mm(a, w, o, out, null);
        } catch (RuntimeException | Error e) {  // an Error too (JavaCPP's or the heap's OutOfMemoryError): no leaked output
            Closing.closeAfter(e, out);
            throw e;
        }
        return out;
    }

    /**
     * Writes {@code out} on {@code stream} (null: the per-thread stream). Runs the calling thread's kept plan for this
     * problem and stream, made on first use: by default up to 8 plans and 8 MiB of device memory per thread and 256 MiB
     * over all threads (system properties {@code gapfill.keptPlans.*}; {@code perThread=0} turns keeping off), the least
     * recently run dropped first, all of them closed by {@link dev.gapfill.core.Resources#release} (and by a new thread for the
     * threads that ended). Not while the stream is being captured into a CUDA graph: then a plan is made and closed
     * inside the capture. {@link #plan} holds one explicitly.
     *
     * @throws ArgumentException         on an invalid argument (named)
     * @throws UnsupportedShapeException CUSTOM forced where it does not apply (M &gt; 64, pre-sm_80 GPU)
     */
    public static void mm(Tensor a, Tensor w, Options o, Tensor out, Stream stream) {
        Shape shape = validate(a, w, o, out);
        Checks.open("out", out);  // validate() takes a null out (shape only); this overload needs one
        if (a.device().isCpu()) {
            Int8MmReference.run(a, w, o.aScale(), o.wScale(), o.bias(), out);
            return;
        }
        Stream st = OpStreams.pick(a.device(), stream);
        if (st.isCapturing()) {
            // a graph owns what its nodes use: a plan allocated and freed inside the capture, never the thread's kept one
            try (Plan p = plan(a, w, o, st)) {
                p.run(a, w, o, out);
            }
            return;
        }
        KeptPlans<PlanKey, Plan>.Holder h = KEPT.mine();
        PlanKey key = new PlanKey(st.cudaDevice().ordinal(), shape, o.out(), Backend.resolve(o.backend()));
        Plan kept = h.find(key, st);
        if (kept != null) {
            runKept(h, key, kept, a, w, o, out);
            return;
        }
        Plan fresh = plan(a, w, o, st);  // a failure here leaves the kept plans as they were
        if (!h.keep(key, st, fresh)) {  // replaces a plan kept for this problem on another stream
            try (fresh) {  // too large to keep: made and closed per call, as a plan of its own
                fresh.run(a, w, o, out);
            }
            return;
        }
        runKept(h, key, fresh, a, w, o, out);
    }

    private static void runKept(KeptPlans<PlanKey, Plan>.Holder h, PlanKey key, Plan p, Tensor a, Tensor w, Options o, Tensor out) {
        try {
            p.run(a, w, o, out);
        } catch (RuntimeException e) {
            try {
                h.drop(key);
            } catch (RuntimeException dropFailure) {
                e.addSuppressed(dropFailure);  // the run's failure is the one the caller sees
            }
            throw e;
        }
    }
    /** What a kept plan was made for: the device, the problem, the output dtype and the backend asked for. */
    record PlanKey(int device, Shape shape, DType out, Backend requested) implements KeptPlans.Key {}

    /**
     * The plans the one-shot {@link #mm} keeps per thread ({@link KeptPlans}; limits there). The kernel
     * re-arms the split-K counters after each run, so a kept plan's workspace needs no zeroing again.
     */
    static final KeptPlans<PlanKey, Plan> KEPT = new KeptPlans<>("int8_mm", Plan::workspaceBytes);

    /** What {@link #mm} would run for these arguments (validated; nothing launched). */
    public static Decision decide(Tensor a, Tensor w, Options o) {
        Shape s = validate(a, w, o, null);
        if (a.device().isCpu()) {
            return Decision.reference();
        }
        return planChecks(s, o, Gpu.device(a.device()).info());
    }

    /**
     * The decision and the refusals that depend on the path, as {@link #plan} makes them, with nothing allocated: the
     * decision's own (CUSTOM where it does not apply, ...), the custom kernel's plan, and on the vendor path a float
     * output's dequantization pass within 32-bit indexing.
     */
    private static Decision planChecks(Shape s, Options o, dev.gapfill.core.DeviceInfo info) {
        Decision dec = Int8MmHeuristics.decide(s.m(), s.n(), s.k(), o.out(), info, Backend.resolve(o.backend()));
        if (dec.backend() == Backend.CUSTOM) {
            Int8MmHeuristics.skinnyPlan(s.m(), s.n(), s.k(), info);
        } else if (o.out() != DType.I32) {
            dequantBlocks(s.m() * s.n(), info.smCount());
        }
        return dec;
    }

    /**
     * A reusable plan for this shape, output dtype and stream: the decision, the kernel configuration and the
     * workspaces, allocated once (pool, stream-ordered) and zeroed where needed. Run it on its stream only, one
     * run at a time (the split-K counters live in the plan's workspace). With no stream it runs on the default stream
     * of the thread that made it, which it keeps alive until it closes, also after that thread ends
     * ({@link Stream#lease}), so it may be run from other threads (one run at a time).
     */
    public static Plan plan(Tensor a, Tensor w, Options o, Stream stream) {
        Shape s = validate(a, w, o, null);
        if (a.device().isCpu()) {
            return new Plan(a.device(), null, null, s, o, Decision.reference(), null, null, null, null, 0, null);
        }
        Stream st = OpStreams.pick(a.device(), stream);
        Stream.Lease lease = st.lease();
        try {
            return plan(a, s, o, st, lease);
        } catch (RuntimeException | Error e) {
            lease.close();
            throw e;
        }
    }

    private static Plan plan(Tensor a, Shape s, Options o, Stream st, Stream.Lease lease) {
        CudaDevice d = st.cudaDevice();
        Decision dec = Int8MmHeuristics.decide(s.m(), s.n(), s.k(), o.out(), d.info(), Backend.resolve(o.backend()));
        if (dec.backend() == Backend.CUSTOM) {
            Int8MmHeuristics.SkinnyPlan sp = Int8MmHeuristics.skinnyPlan(s.m(), s.n(), s.k(), d.info());
            KernelFunction fn = SKINNY.function(d, sp.symbol(o.out()));  // resolved once, before anything is allocated
            Tensor ws = null;
            if (sp.workspaceBytes() > 0) {
                ws = Tensor.empty(a.device(), DType.I8, st, sp.workspaceBytes());
                try {
                    d.check(cudart.cudaMemsetAsync(new DevicePointer(ws.address()), 0, sp.counterBytes(), st.handle()),
                            "cudaMemsetAsync(int8_mm split-K counters)");
                } catch (RuntimeException e) {
                    ws.close();
                    throw e;
                }
            }
            return new Plan(a.device(), st, lease, s, o, dec, sp, null, ws, null, 0, fn);
        }
        int dequantBlocks = o.out() == DType.I32 ? 0 : dequantBlocks(s.m() * s.n(), d.info().smCount());  // before any work
        KernelFunction dequant = o.out() == DType.I32 ? null
                : DEQUANT.function(d, "int8_mm_dequant_" + o.out().name().toLowerCase(java.util.Locale.ROOT));
        LtAlgo lt = ltAlgo(d, s);
        Tensor ws = null;
        Tensor acc = null;
        try {
            if (lt.workspaceBytes > 0) {
                ws = Tensor.empty(a.device(), DType.I8, st, lt.workspaceBytes);
            }
            if (o.out() != DType.I32) {
                acc = Tensor.empty(a.device(), DType.I32, st, s.m(), s.n());
            }
        } catch (RuntimeException | Error e) {
            if (ws != null) {
                Closing.closeAfter(e, ws);
            }
            releaseLt(lt);
            throw e;
        }
        return new Plan(a.device(), st, lease, s, o, dec, null, lt, ws, acc, dequantBlocks, dequant);
    }

    /**
     * Blocks of the vendor path's dequantization pass over M·N elements (256 threads, at most 8 blocks per SM), after
     * checking that its 32-bit grid-stride index cannot wrap: M·N + blocks·256 must stay at most 2^31-1
     * ({@link Checks#gridStrideIndexable}; ArgumentException naming "out").
     */
    static int dequantBlocks(long total, int sms) {
        int blocks = (int) Math.max(1, Math.min((total + 255) / 256, 8L * sms));
        Checks.gridStrideIndexable("out", "M·N, elements of the dequantization pass", total, blocks, 256);
        return blocks;
    }

    /** A planned problem; {@link #run} only launches. */
    public static final class Plan implements AutoCloseable {
        private final Device device;
        private final Stream stream;
        private final Stream.Lease lease;  // keeps a default stream alive past its thread while the plan is open
        private final Shape shape;
        private final DType out;
        private final Decision decision;
        private final Int8MmHeuristics.SkinnyPlan skinny;
        private final LtAlgo lt;
        private final Tensor workspace;
        private final Tensor acc;
        private final int dequantBlocks;
        /** The custom kernel, or the vendor path's scaling pass (null: I32 vendor output, or the CPU). */
        private final KernelFunction kernel;
        private boolean closed;

        private Plan(Device device, Stream stream, Stream.Lease lease, Shape shape, Options o, Decision decision,
                     Int8MmHeuristics.SkinnyPlan skinny, LtAlgo lt, Tensor workspace, Tensor acc, int dequantBlocks,
                     KernelFunction kernel) {
            this.kernel = kernel;
            this.device = device;
            this.stream = stream;
            this.lease = lease;
            this.shape = shape;
            this.out = o.out();
            this.decision = decision;
            this.skinny = skinny;
            this.lt = lt;
            this.workspace = workspace;
            this.acc = acc;
            this.dequantBlocks = dequantBlocks;
        }

        public Decision decision() { return decision; }

        /** Device bytes this plan holds (split-K or cuBLASLt workspace, vendor int32 temporary). */
        public long workspaceBytes() {
            return (workspace == null ? 0 : workspace.byteSize()) + (acc == null ? 0 : acc.byteSize());
        }

        /** Runs the planned problem on the plan's stream; the arguments must match the planned shape and dtypes. */
        public void run(Tensor a, Tensor w, Options o, Tensor out) {
            if (closed) {
                throw new IllegalStateException("int8_mm plan is closed");
            }
            Shape s = validate(a, w, o, out);
            Checks.open("out", out);
            if (!s.equals(shape) || !a.device().equals(device)) {
                // name the operand that differs: A carries M and K and the device, W carries N (and K, A's match)
                boolean aDiffers = s.m() != shape.m() || s.k() != shape.k() || !a.device().equals(device);
                throw new ArgumentException(aDiffers ? "a" : "w", "the planned problem " + describe(), "[" + s.m() + ", " + s.k() + "] x [" + s.n() + ", "
                        + s.k() + "] -> " + o.out() + " on " + a.device());
            }
            if (o.out() != this.out) {
                throw new ArgumentException("options.out", "the planned output dtype " + this.out + " (" + describe() + ")",
                        String.valueOf(o.out()));
            }
            if (device.isCpu()) {
                Int8MmReference.run(a, w, o.aScale(), o.wScale(), o.bias(), out);
                return;
            }
            // before the launches: work already queued orders the frees if a later one fails
            OpStreams.record(stream, a, w, out, o.aScale(), o.wScale(), o.bias(), workspace, acc);
            try {
                if (decision.backend() == Backend.CUSTOM) {
                    runCustom(a, w, o, out);
                } else {
                    runVendor(a, w, o, out);
                }
            } finally {  // the tensors stay reachable until every launch is queued: their cleaner must not free them before (recorded above)
                Reference.reachabilityFence(a);
                Reference.reachabilityFence(w);
                Reference.reachabilityFence(o);  // holds the scales and the bias
                Reference.reachabilityFence(out);
                Reference.reachabilityFence(this);  // and the plan's workspaces (a plan dropped while it runs)
            }
        }

        private void runCustom(Tensor a, Tensor w, Options o, Tensor out) {
            Int8MmHeuristics.SkinnyPlan p = skinny;
            KernelArgs args = KernelArgs.begin().ptr(a).ptr(w).ptr(out);
            scaleArgs(args, o);
            args.ptr(workspace).i32((int) shape.m()).i32((int) shape.n()).i32((int) shape.k()).i32(p.ks());
            kernel.launch(stream, p.tilesN(), p.splits(), 1,
                    Int8MmHeuristics.THREADS, 1, 1, p.smemBytes(), args);
        }

        private void runVendor(Tensor a, Tensor w, Options o, Tensor out) {
            CudaDevice d = stream.cudaDevice();
            Tensor c = this.out == DType.I32 ? out : acc;
            InitcheckAid.beforeVendorWrite(c, stream);
            DevicePointer cp = new DevicePointer(c.address());
            // the validation admits 16-byte pointers; the cached algorithm assumes 256 (cuBLASLt's default preference)
            cublasLtMatmulHeuristicResult_t algo = ((w.address() | a.address() | c.address()) & 255) == 0 ? lt.result : lt.result16;
            if (algo == null) {
                throw new UnsupportedShapeException("a", "A, W and out on 256 bytes (cuBLASLt has no int8 TN algorithm for 16-byte"
                        + " pointers at this shape within the aligned algorithm's workspace)", describe());
            }
            int rc = cublas.cublasLtMatmul(VendorHandles.cublasLt(d), lt.desc, HostConstants.ONE_I32,
                    new DevicePointer(w.address()), lt.layoutW, new DevicePointer(a.address()), lt.layoutA, HostConstants.ZERO_I32, cp, lt.layoutC, cp,
                    lt.layoutC, algo.algo(), workspace == null ? null : new DevicePointer(workspace.address()),
                    lt.workspaceBytes, stream.handle());
            if (rc != 0) {  // the message (describe()) is built only on failure
                VendorHandles.checkBlas(d, rc, "cublasLtMatmul(int8 TN " + describe() + ")");
            }
            if (this.out != DType.I32) {
                int blocks = dequantBlocks;  // checked against 32-bit index wrap-around by plan()
                KernelArgs args = KernelArgs.begin().ptr(acc).ptr(out);
                scaleArgs(args, o);
                args.i32((int) shape.m()).i32((int) shape.n());
                kernel.launch(stream, blocks, 1, 1,
                        256, 1, 1, 0, args);
            }
        }

        private void scaleArgs(KernelArgs args, Options o) {
            if (this.out == DType.I32) {
                args.i64(0).i32(0).i64(0).i32(0).i64(0);
            } else {
                args.ptr(o.aScale()).i32(o.aScale().numel() > 1 ? 1 : 0).ptr(o.wScale()).i32(o.wScale().numel() > 1 ? 1 : 0).ptr(o.bias());
            }
        }

        private String describe() {
            return "[" + shape.m() + ", " + shape.k() + "] x [" + shape.n() + ", " + shape.k() + "] -> " + out + " on " + device;
        }

        /**
         * Frees the workspaces (stream-ordered after the plan's last run) and releases the cuBLASLt descriptors; every
         * part is freed even where freeing another failed (the first failure is thrown after).
         */
        @Override public void close() {
            if (closed) {
                return;
            }
            closed = true;
            Cleanup cleanup = new Cleanup();
            if (lt != null) {
                cleanup.run(() -> releaseLt(lt));
            }
            cleanup.close(workspace);
            cleanup.close(acc);
            cleanup.close(lease);  // after the frees, which are ordered on the leased stream
            cleanup.rethrow();
        }

        @Override public String toString() {
            return "Int8Mm.Plan(" + describe() + ", " + decision + ")";
        }
    }

    // ------------------------------------------------------------------ validation

    /** Validates every argument (out may be null when only the shape is wanted); returns M, N, K. */
    static Shape validate(Tensor a, Tensor w, Options o, Tensor out) {
        Checks.open("a", a);
        Checks.open("w", w);
        if (o == null) {
            throw new ArgumentException("options", "options", "null");
        }
        Checks.dtype("a", a, DType.I8);
        Checks.dtype("w", w, DType.I8);
        Checks.rank("a", a, 2);
        Checks.rank("w", w, 2);
        long m = a.dim(0);
        long k = a.dim(1);
        long n = w.dim(0);
        if (k % 16 != 0) {
            throw new ArgumentException("a", "shape [m, k] with k a multiple of 16", Arrays.toString(a.shape()) + " (k=" + k + ")");
        }
        if (k > MAX_K) {
            throw new ArgumentException("a", "k <= " + MAX_K + " (so that the int32 accumulator cannot overflow)", "k=" + k);
        }
        Checks.shape("w", w, "n, k", -1, k);
        Checks.sameDevice("w", w, a.device());
        Checks.contiguous("a", a);
        Checks.contiguous("w", w);
        Checks.int32Indexable("a", a);
        Checks.int32Indexable("w", w);
        if (m * n > Integer.MAX_VALUE) {
            throw new ArgumentException("out", "at most 2^31-1 elements (32-bit indexing)", (m * n) + " elements");
        }
        if (o.out() == DType.I32) {
            if (o.aScale() != null || o.wScale() != null || o.bias() != null) {
                throw new ArgumentException(o.aScale() != null ? "aScale" : o.wScale() != null ? "wScale" : "bias",
                        "no scales or bias for an I32 output", "a tensor");
            }
        } else {
            checkVector("aScale", o.aScale(), m, "m", true, a.device());
            checkVector("wScale", o.wScale(), n, "n", true, a.device());
            if (o.bias() != null) {
                checkVector("bias", o.bias(), n, "n", false, a.device());
            }
        }
        if (out != null) {
            Checks.open("out", out);
            Checks.dtype("out", out, o.out());
            Checks.shape("out", out, "m, n", m, n);
            Checks.sameDevice("out", out, a.device());
            Checks.contiguous("out", out);
            // the kernels read the inputs while other blocks write out (and split-K reads them on every split)
            Checks.noOverlap("out", out, "a", a);
            Checks.noOverlap("out", out, "w", w);
            Checks.noOverlap("out", out, "aScale", o.aScale());
            Checks.noOverlap("out", out, "wScale", o.wScale());
            Checks.noOverlap("out", out, "bias", o.bias());
        }
        if (a.device().isCuda()) {
            Checks.aligned("a", a, 16);
            Checks.aligned("w", w, 16);
            if (out != null) {
                Checks.aligned("out", out, 16);
            }
        }
        return new Shape(m, n, k);
    }

    private static void checkVector(String name, Tensor t, long len, String dim, boolean scalarOk, Device device) {
        if (t == null) {
            throw new ArgumentException(name, "an F32 tensor [" + dim + "=" + len + "]" + (scalarOk ? " or [1]" : "") + " for a float output", "null");
        }
        Checks.open(name, t);
        Checks.dtype(name, t, DType.F32);
        Checks.rank(name, t, 1);
        if (t.dim(0) != len && !(scalarOk && t.dim(0) == 1)) {
            throw new ArgumentException(name, "shape [" + dim + "=" + len + "]" + (scalarOk ? " or [1]" : ""), Arrays.toString(t.shape()));
        }
        Checks.contiguous(name, t);
        Checks.sameDevice(name, t, device);
    }

    // ------------------------------------------------------------------ cuBLASLt algorithm cache

    /**
     * cuBLASLt descriptors and the heuristic's algorithm for one (device, M, N, K), cached in {@link #LT_CACHE} until
     * {@link dev.gapfill.core.Resources#release}. Plans that use it count as its users (under the cache's lock): one
     * evicted while a plan still holds it is destroyed when the last such plan closes, so a plan held across a release
     * keeps working.
     */
    static final class LtAlgo {
        int users;        // open plans using it; guarded by LT_CACHE
        boolean evicted;  // removed from LT_CACHE; guarded by LT_CACHE
        final cublasLtMatmulDescOpaque_t desc;
        final cublasLtMatrixLayoutOpaque_t layoutW;
        final cublasLtMatrixLayoutOpaque_t layoutA;
        final cublasLtMatrixLayoutOpaque_t layoutC;
        final cublasLtMatmulHeuristicResult_t result;
        // for pointers not all on 256 bytes (the alignment cuBLASLt's heuristic assumes by default, which `result` was
        // chosen under): an algorithm chosen with 16-byte minimum alignments, or null where cuBLASLt has none
        final cublasLtMatmulHeuristicResult_t result16;
        final long workspaceBytes;  // what either algorithm needs: plans allocate it

        LtAlgo(cublasLtMatmulDescOpaque_t desc, cublasLtMatrixLayoutOpaque_t layoutW, cublasLtMatrixLayoutOpaque_t layoutA,
               cublasLtMatrixLayoutOpaque_t layoutC, cublasLtMatmulHeuristicResult_t result, cublasLtMatmulHeuristicResult_t result16) {
            this.desc = desc;
            this.layoutW = layoutW;
            this.layoutA = layoutA;
            this.layoutC = layoutC;
            this.result = result;
            this.result16 = result16;
            this.workspaceBytes = result.workspaceSize();  // result16 is chosen within it
        }

        /** Destroys the descriptors (no plan may use them afterwards). */
        void destroy() {
            destroyLt(desc, layoutW, layoutA, layoutC, result);
            if (result16 != null) {
                result16.close();
            }
        }
    }

    /** A plan stops using {@code lt}: the last user of an evicted entry destroys it. */
    static void releaseLt(LtAlgo lt) {
        synchronized (LT_CACHE) {
            lt.users--;
            if (lt.evicted && lt.users == 0) {
                lt.destroy();
            }
        }
    }

    /** The cache evicts {@code lt}: destroyed now if no plan uses it, else by the last plan that does. */
    static void evictLt(LtAlgo lt) {
        synchronized (LT_CACHE) {
            lt.evicted = true;
            if (lt.users == 0) {
                lt.destroy();
            }
        }
    }

    /**
     * Row-major C[M,N] = A·Wᵀ is column-major Cᵀ[N,M] = W·Aᵀ: cuBLASLt's A operand is W viewed as the
     * column-major [K, N] matrix (ld K) with TRANSA = T, its B operand is A viewed as [K, M] (ld K) with
     * TRANSB = N, and C is [N, M] with ld N — the TN layout cuBLASLt's int8 kernels want.
     */
    private static LtAlgo ltAlgo(CudaDevice d, Shape s) {
        String key = d.ordinal() + "/" + s.m() + "/" + s.n() + "/" + s.k();
        synchronized (LT_CACHE) {  // the caller becomes a user (releaseLt when its plan closes)
            LtAlgo cached = LT_CACHE.get(key);
            if (cached != null) {
                cached.users++;
                return cached;
            }
            var handle = VendorHandles.cublasLt(d);
            cublasLtMatmulDescOpaque_t desc = null;
            cublasLtMatrixLayoutOpaque_t lw = null, la = null, lc = null;
            cublasLtMatmulHeuristicResult_t result = null;
            cublasLtMatmulHeuristicResult_t result16 = null;
            boolean made = false;
            try (PointerPointer<?> pp = new PointerPointer<>(1); IntPointer op = new IntPointer(1); IntPointer found = new IntPointer(1)) {
                VendorHandles.checkBlas(d, cublas.cublasLtMatmulDescCreate(pp, cublas.CUBLAS_COMPUTE_32I, cudart.CUDA_R_32I), "cublasLtMatmulDescCreate");
                desc = new cublasLtMatmulDescOpaque_t(pp.get(0));
                op.put(0, cublas.CUBLAS_OP_T);
                VendorHandles.checkBlas(d, cublas.cublasLtMatmulDescSetAttribute(desc, cublas.CUBLASLT_MATMUL_DESC_TRANSA, op, 4), "TRANSA");
                op.put(0, cublas.CUBLAS_OP_N);
                VendorHandles.checkBlas(d, cublas.cublasLtMatmulDescSetAttribute(desc, cublas.CUBLASLT_MATMUL_DESC_TRANSB, op, 4), "TRANSB");
                VendorHandles.checkBlas(d, cublas.cublasLtMatrixLayoutCreate(pp, cudart.CUDA_R_8I, s.k(), s.n(), s.k()), "cublasLtMatrixLayoutCreate(W)");
                lw = new cublasLtMatrixLayoutOpaque_t(pp.get(0));
                VendorHandles.checkBlas(d, cublas.cublasLtMatrixLayoutCreate(pp, cudart.CUDA_R_8I, s.k(), s.m(), s.k()), "cublasLtMatrixLayoutCreate(A)");
                la = new cublasLtMatrixLayoutOpaque_t(pp.get(0));
                VendorHandles.checkBlas(d, cublas.cublasLtMatrixLayoutCreate(pp, cudart.CUDA_R_32I, s.n(), s.m(), s.n()), "cublasLtMatrixLayoutCreate(C)");
                lc = new cublasLtMatrixLayoutOpaque_t(pp.get(0));
                result = Pointers.outliveScopes(new cublasLtMatmulHeuristicResult_t(1));  // cached across calls
                VendorHandles.checkBlas(d, heuristic(d, handle, desc, lw, la, lc, LT_MAX_WORKSPACE, 0, result, found),
                        "cublasLtMatmulAlgoGetHeuristic(int8 TN m=" + s.n() + " n=" + s.m() + " k=" + s.k() + ")");
                if (found.get(0) < 1) {
                    throw new UnsupportedShapeException("a", "a shape cuBLASLt's int8 TN kernels support",
                            "no algorithm for M=" + s.m() + ", N=" + s.n() + ", K=" + s.k());
                }
                result16 = heuristic16(d, handle, desc, lw, la, lc, s, result.workspaceSize());
                LtAlgo algo = new LtAlgo(desc, lw, la, lc, result, result16);
                algo.users = 1;
                LT_CACHE.put(key, algo);
                made = true;
                return algo;
            } finally {
                if (!made) {  // a failed call or no algorithm: destroy what was created (the first failure stands)
                    destroyLt(desc, lw, la, lc, result);
                    if (result16 != null) {
                        result16.close();
                    }
                }
            }
        }
    }

    /**
     * cuBLASLt's first int8 TN algorithm for the descriptors within {@code maxWorkspace} bytes of workspace, into
     * {@code result} ({@code found}: how many, 0 or 1): {@code minAlign} 0 keeps cuBLASLt's default minimum alignments
     * (256 bytes), else A, B, C and D are assumed on {@code minAlign} bytes. Returns the heuristic's status; the
     * preference's own calls throw.
     */
    private static int heuristic(CudaDevice d, org.bytedeco.cuda.cublas.cublasLtContext handle, cublasLtMatmulDescOpaque_t desc,
            cublasLtMatrixLayoutOpaque_t lw, cublasLtMatrixLayoutOpaque_t la, cublasLtMatrixLayoutOpaque_t lc, long maxWorkspace,
            int minAlign, cublasLtMatmulHeuristicResult_t result, IntPointer found) {
        try (PointerPointer<?> pp = new PointerPointer<>(1); IntPointer align = new IntPointer(1); LongPointer maxWs = new LongPointer(1)) {
            VendorHandles.checkBlas(d, cublas.cublasLtMatmulPreferenceCreate(pp), "cublasLtMatmulPreferenceCreate");
            cublasLtMatmulPreferenceOpaque_t pref = new cublasLtMatmulPreferenceOpaque_t(pp.get(0));
            try {
                maxWs.put(0, maxWorkspace);
                VendorHandles.checkBlas(d, cublas.cublasLtMatmulPreferenceSetAttribute(pref, cublas.CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                        maxWs, 8), "MAX_WORKSPACE_BYTES");
                if (minAlign > 0) {
                    align.put(0, minAlign);
                    for (int attr : new int[] {cublas.CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, cublas.CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                            cublas.CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, cublas.CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
                        VendorHandles.checkBlas(d, cublas.cublasLtMatmulPreferenceSetAttribute(pref, attr, align, 4), "MIN_ALIGNMENT_*_BYTES");
                    }
                }
                return cublas.cublasLtMatmulAlgoGetHeuristic(handle, desc, lw, la, lc, lc, pref, 1, result, found);
            } finally {
                cublas.cublasLtMatmulPreferenceDestroy(pref);
            }
        }
    }

    /**
     * The algorithm for pointers that are not all on 256 bytes ({@code result} was chosen under cuBLASLt's default
     * minimum alignments, 256 bytes; the validation admits A, W and out on 16): chosen with 16-byte minimum alignments
     * within {@code maxWorkspace}, the aligned algorithm's own workspace, so that no plan allocates more than before (kept
     * plans count their bytes). Null where cuBLASLt has none there (such a call is then refused, naming a).
     */
    private static cublasLtMatmulHeuristicResult_t heuristic16(CudaDevice d, org.bytedeco.cuda.cublas.cublasLtContext handle,
            cublasLtMatmulDescOpaque_t desc, cublasLtMatrixLayoutOpaque_t lw, cublasLtMatrixLayoutOpaque_t la, cublasLtMatrixLayoutOpaque_t lc,
            Shape s, long maxWorkspace) {
        cublasLtMatmulHeuristicResult_t result = Pointers.outliveScopes(new cublasLtMatmulHeuristicResult_t(1));
        boolean made = false;
        try (IntPointer found = new IntPointer(1)) {
            int rc = heuristic(d, handle, desc, lw, la, lc, maxWorkspace, 16, result, found);
            if (rc == 15 || (rc == 0 && found.get(0) < 1)) {  // CUBLAS_STATUS_NOT_SUPPORTED, or nothing found: none
                return null;
            }
            VendorHandles.checkBlas(d, rc, "cublasLtMatmulAlgoGetHeuristic(int8 TN m=" + s.n() + " n=" + s.m() + " k=" + s.k() + ", 16-byte pointers)");
            made = true;
            return result;
        } finally {
            if (!made) {
                result.close();
            }
        }
    }

    /** Destroys the descriptors that exist (null: not created). */
    private static void destroyLt(cublasLtMatmulDescOpaque_t desc, cublasLtMatrixLayoutOpaque_t lw, cublasLtMatrixLayoutOpaque_t la,
                                  cublasLtMatrixLayoutOpaque_t lc, cublasLtMatmulHeuristicResult_t result) {
        if (desc != null) {
            cublas.cublasLtMatmulDescDestroy(desc);
        }
        for (cublasLtMatrixLayoutOpaque_t l : new cublasLtMatrixLayoutOpaque_t[] {lw, la, lc}) {
            if (l != null) {
                cublas.cublasLtMatrixLayoutDestroy(l);
            }
        }
        if (result != null) {
            result.close();
        }
    }
}
