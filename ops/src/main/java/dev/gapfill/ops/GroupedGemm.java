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
import dev.gapfill.ops.reference.GroupedGemmReference;
import org.bytedeco.cuda.cublas.cublasContext;
import org.bytedeco.cuda.global.cublas;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.PointerPointer;

import java.lang.ref.Reference;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * Grouped GEMM for mixture-of-experts layers: every expert's GEMM in one call.
 *
 * <p>{@code Y[r, :] = epi_r(X[src(r), :] · W[g])} for every row r of group g, {@code offsets[g] <= r < offsets[g+1]};
 * {@code src(r) = gather[r]} with a gather index, else r; {@code epi_r(a) = s_r · a}, or with SwiGLU
 * {@code epi_r(a)[j] = s_r · silu(a[j]) · a[I + j]} (I = N/2), s_r = rowScale[r] or 1.
 *
 * <p>Dimensions: G groups (experts); T_total rows of the grouped problem (= gather length with a gather
 * index, else rows of X); K reduction; N columns of W (2·I with SwiGLU). Tensors:
 * <ul>
 *   <li>x: [T_x, K] F16 or BF16, contiguous (T_x = T_total without gather);</li>
 *   <li>w: [G, K, N] ({@link WeightLayout#KN}, N-contiguous) or [G, N, K] ({@link WeightLayout#NK}, K-contiguous), x's dtype;</li>
 *   <li>offsets: I32 [G + 1] ON THE DEVICE of the other tensors, monotonic, offsets[0] = 0, offsets[G] = T_total;
 *       empty groups allowed. Not validated on the host (that would need a synchronisation) unless
 *       {@code -Dgapfill.debug.checkOffsets=true}; the custom kernel clamps them into [0, T_total] so bad values
 *       cannot make it touch memory out of bounds;</li>
 *   <li>gather (option): I32 [T_total], values in [0, T_x) (rows outside read zeros; checked in debug mode);</li>
 *   <li>rowScale (option): F32 [T_total];</li>
 *   <li>out: [T_total, N] or [T_total, N/2] with SwiGLU, x's dtype, contiguous; on a GPU its memory must not overlap
 *       x, w, offsets, gather or rowScale.</li>
 * </ul>
 * Accumulation in fp32, epilogue in fp32, one rounding to the output dtype (the grouped-batched vendor peer
 * rounds the GEMM result once more before its epilogue, because cuBLAS refuses an fp32 C there).
 *
 * <p>Backends: CUSTOM is one persistent kernel that schedules its tiles from {@code offsets} on the device:
 * no host synchronisation, capturable in a CUDA graph. VENDOR copies {@code offsets} to the host (a stream
 * synchronisation, so it cannot run under graph capture) and calls cuBLAS once per non-empty group
 * ({@link VendorPath#LOOP}) or once for all ({@link VendorPath#GROUPED_BATCHED}), with separate gather and
 * epilogue passes. AUTO follows {@link GroupedGemmHeuristics}: the custom kernel for decode and mid-size rows per
 * expert, the per-expert loop or the grouped-batched call for large per-expert GEMMs ({@link #decide} names which;
 * the grouped-batched call rounds the GEMM result to the dtype before the epilogue); under graph capture AUTO always
 * runs CUSTOM.
 * Tensors on the CPU run {@link GroupedGemmReference}.
 *
 * @see GroupedGemmHeuristics
 */
public final class GroupedGemm {
    private static final Set<DType> DTYPES = EnumSet.of(DType.F16, DType.BF16);
    private static final KernelModule KERNELS = KernelModule.of("grouped_gemm/grouped_gemm");
    private static final KernelModule PASSES = KernelModule.of("grouped_gemm/vendor_passes");
    // Host scalars for the vendor loop's cuBLAS calls (pointer mode host), allocated once and never written after.
    /**
     * System property: copy offsets (and gather) to the host and validate them before every GPU call (synchronises; not
     * while the stream is being captured into a CUDA graph, where a synchronising copy would invalidate the capture).
     */
    public static final String DEBUG_CHECK_OFFSETS = "gapfill.debug.checkOffsets";

    private GroupedGemm() {}

    /** How W's matrices are stored. */
    public enum WeightLayout {
        /** W [G, K, N], N contiguous (x · W directly). */
        KN,
        /** W [G, N, K], K contiguous (the nn.Linear weight layout, x · Wᵀ). */
        NK
    }

    /** Which cuBLAS formulation the VENDOR backend uses. */
    public enum VendorPath {
        /** cublasGemmEx per non-empty group (fp32 C when an epilogue follows). The VENDOR default. */
        LOOP,
        /**
         * One cublasGemmGroupedBatchedEx call (C in the input dtype, so the GEMM result is rounded to the dtype before
         * the epilogue; cuBLAS ≥ 12.5). Runs wherever the vendor backend runs with this option. AUTO also chooses it
         * without the option ({@link GroupedGemmHeuristics#decide}): on devices other than compute capability 9.0, above
         * 64 rows per group on more than 16 groups with SwiGLU or K·N ≥ 4M, where each group's GEMM is too small for
         * the loop (fewer than 300 rows, or under 4 GFLOP).
         */
        GROUPED_BATCHED
    }

    /**
     * Options of one call.
     *
     * @param layout     weight layout (default KN)
     * @param gather     I32 [T_total] row index into x, or null
     * @param swiglu     fused SwiGLU over the two halves of N (gate first, up second)
     * @param rowScale   F32 [T_total] per-row scale (router weight), or null
     * @param backend    AUTO, VENDOR or CUSTOM (default AUTO)
     * @param vendorPath cuBLAS formulation when VENDOR runs (default LOOP)
     * @param hostOffsets the caller's host copy of {@code offsets} (G + 1 values, equal to the device tensor's), or null:
     *                   where given, the VENDOR paths read it instead of copying the device offsets to the host, one
     *                   stream synchronization less per call (a layer whose projections share one routing copies it
     *                   once: {@link #offsetsToHost}). The custom path reads the device offsets either way. Its
     *                   values are checked on every call (0 first, non-decreasing, T_total last), against the offsets
     *                   themselves on the CPU, and against the device copy under {@link #DEBUG_CHECK_OFFSETS}; a valid
     *                   copy that differs from the device's is the caller's error and gives wrong results otherwise
     */
    public record Options(WeightLayout layout, Tensor gather, boolean swiglu, Tensor rowScale, Backend backend, VendorPath vendorPath,
                          int[] hostOffsets) {
        public Options {
            if (layout == null) {
                throw new ArgumentException("layout", "KN or NK", "null");
            }
            if (backend == null || backend == Backend.REFERENCE) {
                throw new ArgumentException("backend", "AUTO, VENDOR or CUSTOM", String.valueOf(backend));
            }
            if (vendorPath == null) {
                throw new ArgumentException("vendorPath", "LOOP or GROUPED_BATCHED", "null");
            }
            hostOffsets = hostOffsets == null ? null : hostOffsets.clone();  // the caller's array may change after the call
        }

        /** Options without host offsets (the form before the forty-ninth session). */
        public Options(WeightLayout layout, Tensor gather, boolean swiglu, Tensor rowScale, Backend backend, VendorPath vendorPath) {
            this(layout, gather, swiglu, rowScale, backend, vendorPath, null);
        }

        /** A copy of the host offsets (null where none were given). */
        @Override public int[] hostOffsets() { return hostOffsets == null ? null : hostOffsets.clone(); }

        // value semantics for the array component (a record compares and prints arrays by identity)
        @Override public boolean equals(Object other) {
            return other instanceof Options p && layout == p.layout && gather == p.gather && swiglu == p.swiglu && rowScale == p.rowScale
                    && backend == p.backend && vendorPath == p.vendorPath && Arrays.equals(hostOffsets, p.hostOffsets);
        }

        @Override public int hashCode() {
            return java.util.Objects.hash(layout, gather, swiglu, rowScale, backend, vendorPath) * 31 + Arrays.hashCode(hostOffsets);
        }

        @Override public String toString() {
            return "Options[layout=" + layout + ", gather=" + gather + ", swiglu=" + swiglu + ", rowScale=" + rowScale + ", backend=" + backend
                    + ", vendorPath=" + vendorPath + ", hostOffsets=" + (hostOffsets == null ? "null" : hostOffsets.length + " values") + "]";
        }

        /** KN weights, no gather, no epilogue, AUTO. */
        public static Options defaults() { return builder().build(); }

        public static Builder builder() { return new Builder(); }

        /** A copy with another backend. */
        public Options withBackend(Backend b) { return new Options(layout, gather, swiglu, rowScale, b, vendorPath, hostOffsets); }

        /** A copy with the caller's host copy of the offsets ({@link Options#hostOffsets}; null: none). */
        public Options withHostOffsets(int[] offsets) { return new Options(layout, gather, swiglu, rowScale, backend, vendorPath, offsets); }

        /** Builder of {@link Options}. */
        public static final class Builder {
            private WeightLayout layout = WeightLayout.KN;
            private Tensor gather;
            private boolean swiglu;
            private Tensor rowScale;
            private Backend backend = Backend.AUTO;
            private VendorPath vendorPath = VendorPath.LOOP;

            public Builder layout(WeightLayout l) { layout = l; return this; }

            public Builder gather(Tensor g) { gather = g; return this; }

            public Builder swiglu(boolean on) { swiglu = on; return this; }

            public Builder rowScale(Tensor s) { rowScale = s; return this; }

            public Builder backend(Backend b) { backend = b; return this; }

            public Builder vendorPath(VendorPath p) { vendorPath = p; return this; }

            private int[] hostOffsets;

            /** See {@link Options#hostOffsets}. */
            public Builder hostOffsets(int[] offsets) { hostOffsets = offsets; return this; }

            public Options build() { return new Options(layout, gather, swiglu, rowScale, backend, vendorPath, hostOffsets); }
        }
    }

    /** A validated call's dimensions. */
    record Dims(int groups, int tTotal, int xRows, int k, int n, int nOut) {}

    /**
     * Y into a new tensor on the per-thread stream. Every check, those that depend on the path taken included (the vendor
     * passes' 32-bit indexing, CUSTOM's shape limits, VENDOR under graph capture), runs before the output is allocated.
     */
    public static Tensor run(Tensor x, Tensor w, Tensor offsets, Options o) {
        Dims d = validate(x, w, offsets, o, null);
        Stream s = x.device().isCpu() ? null : OpStreams.pick(x.device(), null);
        Decision dec = s == null ? null : plan(x, w, offsets, o, d, s);
        Tensor out = Tensor.empty(x.device(), x.dtype(), d.tTotal(), d.nOut());
        try {
            if (s == null) {
                GroupedGemmReference.run(x, w, offsets, o, out);
            } else {
                launch(x, w, offsets, o, out, s, d, dec);
            }
        } catch (RuntimeException | Error e) {  // an Error too (JavaCPP's or the heap's OutOfMemoryError): no leaked output
            Closing.closeAfter(e, out);
            throw e;
        }
        return out;
    }

    /**
     * Y into {@code out} on {@code stream} (null: the per-thread stream).
     *
     * @throws ArgumentException         on a closed tensor, wrong rank/shape/dtype/device, non-contiguous or misaligned tensor,
     *                                   out overlapping an input, sizes the vendor passes' 32-bit indexing cannot reach,
     *                                   or VENDOR requested under CUDA-graph capture
     * @throws UnsupportedShapeException CUSTOM requested for a shape the kernel does not take (K % 8; N % 8, or N % 16 with
     *                                   SwiGLU, so that N_out % 8 = 0; G > 4096; sm &lt; 80; the smallest tile's shared
     *                                   memory over the device's limit) or with x or w not 16-byte aligned; or, under
     *                                   CUDA-graph capture, an AUTO call whose vendor choice the custom kernel cannot
     *                                   replace for those reasons
     */
    public static void run(Tensor x, Tensor w, Tensor offsets, Options o, Tensor out, Stream stream) {
        Dims d = validate(x, w, offsets, o, out);
        Checks.open("out", out);  // validate() takes a null out (shape only); this overload needs one
        if (x.device().isCpu()) {
            GroupedGemmReference.run(x, w, offsets, o, out);
            return;
        }
        Stream s = OpStreams.pick(x.device(), stream);
        launch(x, w, offsets, o, out, s, d, plan(x, w, offsets, o, d, s));
    }

    /**
     * The path a validated GPU call takes on {@code s}, and the checks that depend on it: under graph capture AUTO's
     * vendor choice becomes the (capturable) custom path and a forced VENDOR is refused; the vendor passes' 32-bit
     * indexing; CUSTOM's shape limits. Nothing is allocated or launched.
     */
    private static Decision plan(Tensor x, Tensor w, Tensor offsets, Options o, Dims d, Stream s) {
        Decision dec = decide(x, w, offsets, o, d);
        if (dec.backend() == Backend.VENDOR && s.isCapturing()) {
            if (Backend.resolve(o.backend()) == Backend.VENDOR) {
                throw new ArgumentException("backend", "CUSTOM or AUTO while the stream is being captured into a CUDA graph "
                        + "(the vendor paths copy offsets to the host)", "VENDOR");
            }
            String why = customUnsupported(x, w, o, d);
            if (why != null) {
                throw new UnsupportedShapeException("x/w", "a shape the custom kernel takes (the only capturable path): " + why,
                        Arrays.toString(w.shape()));
            }
            dec = new Decision(Backend.CUSTOM, GroupedGemmHeuristics.variant(shape(x, o, d), info(x)).id(), "graph capture: the custom path is the capturable one");
        }
        if (dec.backend() == Backend.VENDOR) {
            checkPassIndexing(o, d, info(x).smCount());  // before the offsets copy and any launch
        }
        if (dec.backend() == Backend.CUSTOM && dec.variant().equals("unsupported")) {
            throw new UnsupportedShapeException("x/w", "a shape the custom kernel takes: " + dec.reason(), Arrays.toString(w.shape()));
        }
        return dec;
    }

    /** Runs the planned path {@code dec} into {@code out} on {@code s}. */
    private static void launch(Tensor x, Tensor w, Tensor offsets, Options o, Tensor out, Stream s, Dims d, Decision dec) {
        if (Boolean.getBoolean(DEBUG_CHECK_OFFSETS) && !s.isCapturing()) {
            checkOnHost(offsets, o.gather(), d, s);
            if (o.hostOffsets != null && !Arrays.equals(o.hostOffsets, copyToHost(offsets, d.groups() + 1, s))) {
                throw new ArgumentException("options.hostOffsets", "the device offsets' values (" + DEBUG_CHECK_OFFSETS + ")",
                        "a copy that differs");
            }
        }
        OpStreams.record(s, x, w, offsets, o.gather(), o.rowScale(), out);  // before the launches: work already queued orders the frees if a later one fails
        try {
            if (dec.backend() == Backend.CUSTOM) {
                runCustom(x, w, offsets, o, out, s, d, GroupedGemmHeuristics.Variant.valueOf(dec.variant().toUpperCase(Locale.ROOT)));
            } else {
                runVendor(x, w, offsets, o, out, s, d, dec.variant().equals("cublas_grouped"));
            }
        } finally {  // the tensors stay reachable until every launch is queued: their cleaner must not free them before (recorded above)
            Reference.reachabilityFence(x);
            Reference.reachabilityFence(w);
            Reference.reachabilityFence(offsets);
            Reference.reachabilityFence(o);
            Reference.reachabilityFence(out);
        }
    }

    /**
     * What {@link #run} would do for these tensors, without running it (validates the arguments; {@code out} may be null).
     * CPU tensors give {@link Decision#reference()}.
     */
    public static Decision decide(Tensor x, Tensor w, Tensor offsets, Options o) {
        Dims d = validate(x, w, offsets, o, null);
        if (x.device().isCpu()) {
            return Decision.reference();
        }
        return decide(x, w, offsets, o, d);
    }

    private static Decision decide(Tensor x, Tensor w, Tensor offsets, Options o, Dims d) {
        Backend requested = Backend.resolve(o.backend());
        DeviceInfo info = info(x);
        GroupedGemmHeuristics.Shape shape = shape(x, o, d);
        String misaligned = misaligned(x, w, o);
        if (misaligned != null && requested != Backend.VENDOR) {
            if (requested == Backend.CUSTOM) {
                return new Decision(Backend.CUSTOM, "unsupported", misaligned);
            }
            return new Decision(Backend.VENDOR, o.vendorPath() == VendorPath.LOOP ? "cublas_loop" : "cublas_grouped",
                    "custom kernel needs " + misaligned);
        }
        Decision dec = GroupedGemmHeuristics.decide(shape, info, requested);
        if (dec.backend() == Backend.VENDOR && o.vendorPath() == VendorPath.GROUPED_BATCHED) {
            return Decision.lazy(Backend.VENDOR, "cublas_grouped", () -> dec.reason() + "; grouped-batched requested");
        }
        return dec;
    }

    private static DeviceInfo info(Tensor x) { return Gpu.device(x.device()).info(); }

    static GroupedGemmHeuristics.Shape shape(Tensor x, Options o, Dims d) {
        return new GroupedGemmHeuristics.Shape(d.groups(), d.tTotal(), d.k(), d.n(), o.swiglu(), x.dtype(), o.layout());
    }

    private static String customUnsupported(Tensor x, Tensor w, Options o, Dims d) {
        String why = GroupedGemmHeuristics.customUnsupported(shape(x, o, d), info(x));
        return why != null ? why : misaligned(x, w, o);
    }

    private static String misaligned(Tensor x, Tensor w, Options o) {
        for (Tensor t : new Tensor[] {x, w}) {
            if (t.address() % 16 != 0) {
                return "16-byte aligned x and w (cp.async); got 0x" + Long.toHexString(t.address());
            }
        }
        return null;
    }

    // ------------------------------------------------------------------ validation

    static Dims validate(Tensor x, Tensor w, Tensor offsets, Options o, Tensor out) {
        if (o == null) {
            throw new ArgumentException("options", "an Options (GroupedGemm.Options.defaults())", "null");
        }
        Checks.open("x", x);
        Checks.open("w", w);
        Checks.open("offsets", offsets);
        Checks.rank("x", x, 2);
        Checks.dtype("x", x, DTYPES);
        Checks.contiguous("x", x);
        Checks.rank("w", w, 3);
        Checks.dtype("w", w, x.dtype());
        Checks.contiguous("w", w);
        Checks.sameDevice("w", w, x.device());
        long k = x.dim(1);
        long g = w.dim(0);
        long n = o.layout() == WeightLayout.KN ? w.dim(2) : w.dim(1);
        String legend = o.layout() == WeightLayout.KN ? "G, K, N" : "G, N, K";
        Checks.shape("w", w, legend, o.layout() == WeightLayout.KN ? new long[] {-1, k, -1} : new long[] {-1, -1, k});
        Checks.rank("offsets", offsets, 1);
        Checks.dtype("offsets", offsets, DType.I32);
        Checks.contiguous("offsets", offsets);
        Checks.sameDevice("offsets", offsets, x.device());
        Checks.shape("offsets", offsets, "G + 1", g + 1);
        if (o.hostOffsets != null && o.hostOffsets.length != g + 1) {
            throw new ArgumentException("options.hostOffsets", "G + 1 = " + (g + 1) + " values (offsets' host copy)",
                    o.hostOffsets.length + " values");
        }
        long tTotal = x.dim(0);
        Tensor gather = o.gather();
        if (gather != null) {
            Checks.open("gather", gather);
            Checks.rank("gather", gather, 1);
            Checks.dtype("gather", gather, DType.I32);
            Checks.contiguous("gather", gather);
            Checks.sameDevice("gather", gather, x.device());
            tTotal = gather.dim(0);
        }
        if (o.swiglu() && n % 2 != 0) {
            throw new ArgumentException("w", "an even N with SwiGLU (gate and up halves)", "N = " + n);
        }
        long nOut = o.swiglu() ? n / 2 : n;
        Tensor scale = o.rowScale();
        if (scale != null) {
            Checks.open("rowScale", scale);
            Checks.dtype("rowScale", scale, DType.F32);
            Checks.contiguous("rowScale", scale);
            Checks.sameDevice("rowScale", scale, x.device());
            Checks.shape("rowScale", scale, "T_total", tTotal);
        }
        if (out != null) {
            Checks.open("out", out);
            Checks.dtype("out", out, x.dtype());
            Checks.contiguous("out", out);
            Checks.sameDevice("out", out, x.device());
            Checks.shape("out", out, o.swiglu() ? "T_total, N/2" : "T_total, N", tTotal, nOut);
            if (out.device().isCuda() && out.address() % 4 != 0) {
                throw new ArgumentException("out", "a device address aligned to 4 bytes (column pairs are stored together)",
                        "0x" + Long.toHexString(out.address()));
            }
            // the kernel's blocks read x, w, offsets, gather and rowScale while others write out
            Checks.noOverlap("out", out, "x", x);
            Checks.noOverlap("out", out, "w", w);
            Checks.noOverlap("out", out, "offsets", offsets);
            Checks.noOverlap("out", out, "gather", gather);
            Checks.noOverlap("out", out, "rowScale", scale);
        }
        long big = 1L << 31;
        // each factor below 2^31 first, so that the products below cannot wrap (a gather of 2^32 + 8 rows times a K of
        // 2^31 - 1 would wrap negative and pass)
        if (x.numel() >= big || tTotal >= big || k >= big || n >= big || tTotal * Math.max(k, n) >= big || k * n >= big || g + 1 >= big) {
            throw new ArgumentException("x/w", "T_x·K, T_total·K, T_total·N and K·N below 2^31 (32-bit row indexing)",
                    "T_x=" + x.dim(0) + " T_total=" + tTotal + " K=" + k + " N=" + n);
        }
        if (o.hostOffsets != null) {
            // the caller's host copy is checked on every path before anything is allocated (it had been only on the
            // vendor paths, after the output's allocation; a read-only review, fiftieth session), and on the CPU,
            // where the values are at hand, against the offsets themselves
            try {
                checkOffsets(o.hostOffsets, (int) tTotal);
            } catch (ArgumentException e) {
                throw new ArgumentException("options.hostOffsets", e.expected(), e.received());
            }
            if (offsets.device().isCpu() && !Arrays.equals(o.hostOffsets, offsets.toIntArray())) {
                throw new ArgumentException("options.hostOffsets", "the offsets' values", "a copy that differs");
            }
        }
        return new Dims((int) g, (int) tTotal, (int) x.dim(0), (int) k, (int) n, (int) nOut);
    }

    /** Debug mode: offsets and gather copied to the host and checked (synchronises {@code s}). */
    private static void checkOnHost(Tensor offsets, Tensor gather, Dims d, Stream s) {
        int[] off = copyToHost(offsets, d.groups() + 1, s);
        checkOffsets(off, d.tTotal());
        if (gather != null) {
            int[] gi = copyToHost(gather, d.tTotal(), s);
            for (int r = 0; r < gi.length; r++) {
                if (gi[r] < 0 || gi[r] >= d.xRows()) {
                    throw new ArgumentException("gather", "row indices in [0, " + d.xRows() + ")", "gather[" + r + "] = " + gi[r]);
                }
            }
        }
    }

    /** Offsets must be monotonic from 0 to T_total. */
    public static void checkOffsets(int[] off, int tTotal) {
        if (off == null || off.length == 0) {
            throw new ArgumentException("offsets", "G + 1 >= 1 offsets", off == null ? "null" : "none");
        }
        if (off[0] != 0) {
            throw new ArgumentException("offsets", "offsets[0] = 0", "offsets[0] = " + off[0]);
        }
        for (int g = 0; g + 1 < off.length; g++) {
            if (off[g + 1] < off[g]) {
                throw new ArgumentException("offsets", "non-decreasing offsets", "offsets[" + g + "] = " + off[g] + " > offsets[" + (g + 1)
                        + "] = " + off[g + 1]);
            }
        }
        if (off[off.length - 1] != tTotal) {
            throw new ArgumentException("offsets", "offsets[G] = T_total = " + tTotal, "offsets[G] = " + off[off.length - 1]);
        }
    }

    /**
     * The offsets' values on the host, copied after the work queued on {@code stream} (null: the per-thread stream) and
     * waited for: what {@link Options#hostOffsets} takes, for a caller who runs several vendor calls on one routing.
     *
     * @throws ArgumentException naming {@code offsets}: null, closed, not a contiguous rank-1 I32 tensor on a GPU
     */
    public static int[] offsetsToHost(Tensor offsets, Stream stream) {
        Checks.open("offsets", offsets);
        Checks.rank("offsets", offsets, 1);
        Checks.dtype("offsets", offsets, DType.I32);
        Checks.contiguous("offsets", offsets);
        if (!offsets.device().isCuda()) {
            return offsets.toIntArray();
        }
        Stream s = OpStreams.pick(offsets.device(), stream);
        if (s.isCapturing()) {  // a synchronizing copy would invalidate the caller's graph
            throw new ArgumentException("stream", "a stream that is not being captured (the copy waits for the GPU)", "a capturing stream");
        }
        if (offsets.dim(0) > Integer.MAX_VALUE) {
            throw new ArgumentException("offsets", "at most 2^31 - 1 values", String.valueOf(offsets.dim(0)));
        }
        return copyToHost(offsets, (int) offsets.dim(0), s);
    }

    private static int[] copyToHost(Tensor t, int count, Stream s) {
        CudaDevice cd = s.cudaDevice();
        try (IntPointer host = new IntPointer(count)) {
            cd.check(cudart.cudaMemcpyAsync(host, new DevicePointer(t.address()), 4L * count, cudart.cudaMemcpyDeviceToHost, s.handle()),
                    "cudaMemcpyAsync(D2H, " + 4L * count + " bytes)");
            s.synchronize();
            int[] a = new int[count];
            host.get(a);
            return a;
        }
    }

    private static String dt(DType t) { return t == DType.F16 ? "f16" : "bf16"; }

    /** Kernel symbols by [variant][F16, BF16][layout][plain, swiglu], built once (no string per launch). */
    private static final String[][][][] SYMBOLS = symbols();

    private static String[][][][] symbols() {
        GroupedGemmHeuristics.Variant[] vs = GroupedGemmHeuristics.Variant.values();
        WeightLayout[] ls = WeightLayout.values();
        String[][][][] t = new String[vs.length][2][ls.length][2];
        for (GroupedGemmHeuristics.Variant v : vs) {
            for (int d = 0; d < 2; d++) {
                for (WeightLayout l : ls) {
                    for (int sw = 0; sw < 2; sw++) {
                        t[v.ordinal()][d][l.ordinal()][sw] = "gg_" + v.id() + "_" + (d == 0 ? "f16" : "bf16") + "_"
                                + l.name().toLowerCase(Locale.ROOT) + "_" + (sw == 1 ? "swiglu" : "plain");
                    }
                }
            }
        }
        return t;
    }

    /** Blocks of the vendor path's elementwise passes (gather, epilogue): 4 per SM of 256 threads each. */
    static int passBlocks(int sms) { return Math.max(1, sms * 4); }

    /**
     * The vendor passes index with 32-bit grid-stride loops (vendor_passes.cu): the gather pass over T_total·K
     * elements (its 16-byte-vector form over fewer), the epilogue over T_total·N' (out's elements); each bound plus
     * the grid stride must stay at most 2^31-1 ({@link Checks#gridStrideIndexable}: "gather", "out").
     */
    static void checkPassIndexing(Options o, Dims d, int sms) {
        int blocks = passBlocks(sms);
        if (o.gather() != null) {
            Checks.gridStrideIndexable("gather", "T_total·K, elements of the gather pass", (long) d.tTotal() * d.k(), blocks, 256);
        }
        if (o.swiglu() || o.rowScale() != null) {
            Checks.gridStrideIndexable("out", "T_total·N', elements of the epilogue pass", (long) d.tTotal() * d.nOut(), blocks, 256);
        }
    }

    // ------------------------------------------------------------------ custom

    private static void runCustom(Tensor x, Tensor w, Tensor offsets, Options o, Tensor out, Stream s, Dims d,
                                  GroupedGemmHeuristics.Variant v) {
        DeviceInfo info = s.cudaDevice().info();
        GroupedGemmHeuristics.Shape shape = shape(x, o, d);
        int smem = v.smemBytes(o.layout(), d.groups());
        int grid = GroupedGemmHeuristics.grid(shape, v, info);
        String symbol = SYMBOLS[v.ordinal()][x.dtype() == DType.F16 ? 0 : 1][o.layout().ordinal()][o.swiglu() ? 1 : 0];
        KERNELS.function(s.cudaDevice(), symbol).launch(s, grid, 1, 1, v.threads, 1, 1, smem,
                KernelArgs.begin().ptr(x).ptr(w).ptr(out).ptr(offsets).ptr(o.gather()).ptr(o.rowScale())
                        .i32(d.groups()).i32(d.tTotal()).i32(d.xRows()).i32(d.k()).i32(d.n()));
    }

    // ------------------------------------------------------------------ vendor

    private static void runVendor(Tensor x, Tensor w, Tensor offsets, Options o, Tensor out, Stream s, Dims d, boolean grouped) {
        CudaDevice cd = s.cudaDevice();
        // the synchronisation this path needs, unless the caller has the offsets on the host already
        int[] off = o.hostOffsets;  // checked by validate() before anything was allocated
        if (off == null) {
            off = copyToHost(offsets, d.groups() + 1, s);
            checkOffsets(off, d.tTotal());
        }
        boolean epi = o.swiglu() || o.rowScale() != null;
        boolean c32 = epi && !grouped;  // cublasGemmGroupedBatchedEx refuses fp32 C with 16-bit A/B (status 15)
        int dtype = x.dtype() == DType.F16 ? cudart.CUDA_R_16F : cudart.CUDA_R_16BF;
        int ctype = c32 ? cudart.CUDA_R_32F : dtype;
        long cBytes = c32 ? 4 : x.dtype().bytes();
        long eb = x.dtype().bytes();
        int blocks = passBlocks(cd.info().smCount());  // checked against 32-bit index wrap-around by checkPassIndexing
        Tensor xg = null;
        Tensor acc = null;
        try {
            Tensor a = x;
            if (o.gather() != null) {
                xg = Tensor.empty(x.device(), x.dtype(), s, d.tTotal(), d.k());
                PASSES.function(cd, "gg_gather_" + dt(x.dtype())).launch(s, blocks, 1, 1, 256, 1, 1, 0,
                        KernelArgs.begin().ptr(x).ptr(o.gather()).ptr(xg).i32(d.tTotal()).i32(d.xRows()).i32(d.k()));
                a = xg;
            }
            Tensor c = out;
            if (epi) {
                acc = Tensor.empty(x.device(), c32 ? DType.F32 : x.dtype(), s, d.tTotal(), d.n());
                c = acc;
            }
            // Column-major view: C (N × rows) = op(W_g) (N × K) · X_g (K × rows).
            int transA = o.layout() == WeightLayout.KN ? cublas.CUBLAS_OP_N : cublas.CUBLAS_OP_T;
            int lda = o.layout() == WeightLayout.KN ? d.n() : d.k();
            long wStride = (long) d.k() * d.n() * eb;
            InitcheckAid.beforeVendorWrite(c, s);
            cublasContext h = VendorHandles.cublas(s);
            if (!grouped) {
                for (int g = 0; g < d.groups(); g++) {
                    int rows = off[g + 1] - off[g];
                    if (rows == 0) {
                        continue;
                    }
                    int rc = cublas.cublasGemmEx(h, transA, cublas.CUBLAS_OP_N, d.n(), rows, d.k(), HostConstants.ONE_F32,
                            new DevicePointer(w.address() + g * wStride), dtype, lda,
                            new DevicePointer(a.address() + (long) off[g] * d.k() * eb), dtype, d.k(), HostConstants.ZERO_F32,
                            new DevicePointer(c.address() + (long) off[g] * d.n() * cBytes), ctype, d.n(),
                            cublas.CUBLAS_COMPUTE_32F, cublas.CUBLAS_GEMM_DEFAULT);
                    if (rc != 0) {  // the message is built only on failure
                        VendorHandles.checkBlas(cd, rc, "cublasGemmEx(group " + g + ")");
                    }
                }
            } else {
                groupedBatched(h, cd, s, x, w, a, c, off, d, transA, lda, dtype, ctype, cBytes);
            }
            if (epi) {
                String sym = "gg_epilogue_" + dt(x.dtype()) + (c32 ? "" : "_from_" + dt(x.dtype()));
                PASSES.function(cd, sym).launch(s, blocks, 1, 1, 256, 1, 1, 0, KernelArgs.begin().ptr(acc).ptr(o.rowScale()).ptr(out)
                        .i32(d.tTotal()).i32(d.n()).i32(o.swiglu() ? 1 : 0));
            }
        } finally {
            if (xg != null) {
                xg.close();  // stream-ordered on s
            }
            if (acc != null) {
                acc.close();
            }
        }
    }

    private static void groupedBatched(cublasContext h, CudaDevice cd, Stream s, Tensor x, Tensor w, Tensor a, Tensor c, int[] off,
                                       Dims d, int transA, int lda, int dtype, int ctype, long cBytes) {
        int gc = 0;
        for (int g = 0; g < d.groups(); g++) {
            gc += off[g + 1] > off[g] ? 1 : 0;
        }
        if (gc == 0) {
            return;
        }
        long eb = x.dtype().bytes();
        long wStride = (long) d.k() * d.n() * eb;
        // One cuBLAS group per non-empty expert (group_size 1): m, n, k differ per expert.
        ArraySlot slot = ArraySlot.take(cd, gc);
        boolean enqueued = false;
        try {
            int i = 0;
            for (int g = 0; g < d.groups(); g++) {
                int rows = off[g + 1] - off[g];
                if (rows == 0) {
                    continue;
                }
                slot.ta.put(i, transA);
                slot.tb.put(i, cublas.CUBLAS_OP_N);
                slot.m.put(i, d.n());
                slot.n.put(i, rows);
                slot.k.put(i, d.k());
                slot.ldA.put(i, lda);
                slot.ldB.put(i, d.k());
                slot.ldC.put(i, d.n());
                slot.size.put(i, 1);
                slot.alpha.put(i, 1f);
                slot.beta.put(i, 0f);
                slot.ptrs.put(i, w.address() + g * wStride);
                slot.ptrs.put(gc + i, a.address() + (long) off[g] * d.k() * eb);
                slot.ptrs.put(2L * gc + i, c.address() + (long) off[g] * d.n() * cBytes);
                i++;
            }
            // The pointer arrays must live in device memory.
            try (Tensor devPtrs = Tensor.empty(x.device(), DType.I8, s, 24L * gc)) {
                enqueued = true;  // from here on the stream may read the slot's arrays: it is given back behind an event
                cd.check(cudart.cudaMemcpyAsync(new DevicePointer(devPtrs.address()), slot.ptrs, 24L * gc, cudart.cudaMemcpyHostToDevice,
                        s.handle()), "cudaMemcpyAsync(H2D, grouped GEMM pointer arrays)");
                long base = devPtrs.address();
                int st = cublas.cublasGemmGroupedBatchedEx(h, slot.ta, slot.tb, slot.m, slot.n, slot.k, slot.alpha,
                        new PointerPointer<>(new DevicePointer(base)), dtype, slot.ldA,
                        new PointerPointer<>(new DevicePointer(base + 8L * gc)), dtype, slot.ldB, slot.beta,
                        new PointerPointer<>(new DevicePointer(base + 16L * gc)), ctype, slot.ldC, gc, slot.size, cublas.CUBLAS_COMPUTE_32F);
                VendorHandles.checkBlas(cd, st, "cublasGemmGroupedBatchedEx(" + gc + " groups)");
            }
        } finally {
            slot.giveBack(s, enqueued);
        }
    }

    /**
     * The host arrays of one {@code cublasGemmGroupedBatchedEx} call (sizes, transposes, scalars, and the source of the
     * device pointer table's copy), reused once the stream work that may read them has completed. A call takes a free
     * slot of its device whose ordering event has completed, or makes a new one, and gives it back with the event
     * recorded on its stream after the call. Until {@code 2e80d17} the path synchronized the stream after every call
     * so that it could free these arrays; that put a host round trip (the wake-up, then the epilogue's launch) into
     * every call. Slots are native memory that outlives any caller's {@code PointerScope} (68 bytes per group,
     * capacities in powers of two from 64 groups), kept until {@code Resources.release} ({@link OpCaches}): per device,
     * about as many as calls were ever in flight on it at once (a call that finds every pooled slot held by another
     * thread's scan makes one more); a completed slot too small for a call is freed.
     */
    static final class ArraySlot {
        private static final java.util.concurrent.ConcurrentLinkedQueue<ArraySlot> FREE = new java.util.concurrent.ConcurrentLinkedQueue<>();

        final int ordinal;
        final int capacity;
        final IntPointer ta;
        final IntPointer tb;
        final IntPointer m;
        final IntPointer n;
        final IntPointer k;
        final IntPointer ldA;
        final IntPointer ldB;
        final IntPointer ldC;
        final IntPointer size;
        final FloatPointer alpha;
        final FloatPointer beta;
        final LongPointer ptrs;
        /** Recorded after the call that last used the slot; null until then. */
        private dev.gapfill.core.Event done;

        private ArraySlot(int ordinal, int capacity) {
            this.ordinal = ordinal;
            this.capacity = capacity;
            ta = keep(new IntPointer(capacity));
            tb = keep(new IntPointer(capacity));
            m = keep(new IntPointer(capacity));
            n = keep(new IntPointer(capacity));
            k = keep(new IntPointer(capacity));
            ldA = keep(new IntPointer(capacity));
            ldB = keep(new IntPointer(capacity));
            ldC = keep(new IntPointer(capacity));
            size = keep(new IntPointer(capacity));
            alpha = keep(new FloatPointer(capacity));
            beta = keep(new FloatPointer(capacity));
            ptrs = keep(new LongPointer(3L * capacity));
        }

        private static <P extends org.bytedeco.javacpp.Pointer> P keep(P p) {
            return dev.gapfill.core.Pointers.outliveScopes(p);
        }

        /** The capacity a new slot gets for {@code groups} groups: the next power of two, at least 64. */
        static int capacityFor(int groups) {
            return groups > 1 << 29 ? groups : Math.max(64, Integer.highestOneBit(Math.max(1, groups - 1)) << 1);
        }

        /** A free slot of {@code cd} with room for {@code groups} groups whose last call has completed, or a new one. */
        static ArraySlot take(CudaDevice cd, int groups) {
            java.util.List<ArraySlot> keepInPool = new java.util.ArrayList<>();
            ArraySlot found = null;
            RuntimeException failure = null;
            try {  // slots polled and still in flight go back whatever escapes (an Error included)
                for (ArraySlot sl; found == null && failure == null && (sl = FREE.poll()) != null; ) {
                    boolean complete = false;
                    if (sl.ordinal == cd.ordinal()) {
                        try {
                            complete = sl.done == null || sl.done.isComplete();
                        } catch (RuntimeException e) {
                            failure = e;  // a device error: reported to this call, the slot stays pooled
                        }
                    }
                    if (complete && sl.capacity >= groups) {
                        found = sl;
                    } else if (complete) {
                        sl.free();
                    } else {
                        keepInPool.add(sl);
                    }
                }
            } finally {
                FREE.addAll(keepInPool);
            }
            if (failure != null) {
                throw failure;
            }
            return found != null ? found : new ArraySlot(cd.ordinal(), capacityFor(groups));
        }

        /**
         * Returns the slot to the pool: behind an event recorded on {@code s} where work that may read it was queued
         * ({@code enqueued}), at once where none was. A slot whose event cannot be recorded (the device failed) is
         * dropped, never freed: work queued before the failure may still read it.
         */
        void giveBack(Stream s, boolean enqueued) {
            if (enqueued) {
                try {
                    if (done == null) {
                        done = dev.gapfill.core.Event.forOrdering(s.device());
                    }
                    done.record(s);
                } catch (RuntimeException e) {
                    DROPPED.add(this);  // kept reachable, so that no collector frees arrays queued work may still read
                    return;  // the caller's own exception, if any, is the one that propagates
                }
            }
            FREE.add(this);
        }

        /** Slots whose event could not be recorded (a failed device): never reused, never freed. */
        private static final java.util.concurrent.ConcurrentLinkedQueue<ArraySlot> DROPPED = new java.util.concurrent.ConcurrentLinkedQueue<>();

        /** Frees the arrays and the event of a slot whose last call has completed. */
        private void free() {
            for (org.bytedeco.javacpp.Pointer p : new org.bytedeco.javacpp.Pointer[] {ta, tb, m, n, k, ldA, ldB, ldC, size, alpha, beta, ptrs}) {
                p.releaseReference();
            }
            if (done != null) {
                try {
                    done.close();
                } catch (RuntimeException e) {
                    // the device failed: its events go with its context
                }
            }
        }

        /** Slots in the pool now of device {@code ordinal} (-1: every device); slots a call holds are not counted. */
        static int pooled(int ordinal) {
            int n = 0;
            for (ArraySlot sl : FREE) {
                n += ordinal < 0 || sl.ordinal == ordinal ? 1 : 0;
            }
            return n;
        }

        /**
         * Frees the pooled slots of device {@code ordinal} (-1: every device), each after its last call has completed
         * (on a device with a sticky error, at once: its work will not run); returns how many. Slots a call holds stay
         * with it and return to the pool when it ends. For {@code Resources.release} ({@link OpCaches}).
         */
        static int release(int ordinal) {
            java.util.List<ArraySlot> others = new java.util.ArrayList<>();
            int n = 0;
            for (ArraySlot sl; (sl = FREE.poll()) != null; ) {
                if (ordinal >= 0 && sl.ordinal != ordinal) {
                    others.add(sl);
                    continue;
                }
                if (sl.done != null && Gpu.device(sl.ordinal).stickyCause() == null) {
                    try {
                        sl.done.synchronize();
                    } catch (RuntimeException e) {
                        if (Gpu.device(sl.ordinal).stickyCause() == null) {
                            // not the device's end (e.g. a wait refused under another thread's capture): a call may still
                            // read the arrays, so the slot stays pooled (a read-only review, fiftieth session)
                            others.add(sl);
                            continue;
                        }
                        // the device failed while we waited: its queued work will not read the arrays any more
                    }
                }
                sl.free();
                n++;
            }
            FREE.addAll(others);
            return n;
        }
    }

    /** Output shape for these inputs: [T_total, N] or [T_total, N/2] with SwiGLU. */
    public static long[] outputShape(Tensor x, Tensor w, Tensor offsets, Options o) {
        Dims d = validate(x, w, offsets, o, null);
        return new long[] {d.tTotal(), d.nOut()};
    }
}
