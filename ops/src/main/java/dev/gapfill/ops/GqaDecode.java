package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.Checks;
import dev.gapfill.core.Closing;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;

/**
 * Grouped-query attention, one decode step, over a contiguous or paged KV cache.
 *
 * <p>{@code o[b,h] = softmax(scale · q[b,h] · K[b, h/G, :len_b]ᵀ) · V[b, h/G, :len_b]}, with
 * {@code lse[b,h] = log Σ_j exp(scale · q[b,h] · K[b, h/G, j])} as an optional second output.
 *
 * <p>Dimensions: B batch (sequences), Hq query heads, Hkv KV heads, G = Hq / Hkv query heads per KV head
 * (G = 1: multi-head; Hkv = 1: multi-query), D head dim, L cache capacity (positions), len_b the number of valid
 * positions of sequence b (int32 on the device, 0 ≤ len_b ≤ maxLen; 0 yields zeros and lse = −inf; larger values are
 * clamped to the plan's maxLen on the device).
 * <ul>
 *   <li>q {@code [B, Hq, D]}, o {@code [B, Hq, D]}: F16 or BF16 (the cache's dtype), contiguous;</li>
 *   <li>lse {@code [B, Hq]} F32 (optional);</li>
 *   <li>lens {@code [B]} I32;</li>
 *   <li>K and V, one of the {@link KvLayout}s: {@code BHLD [B, Hkv, L, D]}, {@code BLHD [B, L, Hkv, D]}, or
 *   {@code PAGED}: pages {@code [P, pageSize, Hkv, D]} with a block table {@code [B, maxPages]} I32 (page of
 *   position j of sequence b = table[b, j / pageSize]; pageSize a power of two; the page numbers of the positions
 *   below each length must be in [0, P): the CPU path checks them, GPU runs check them with
 *   {@code -Dgapfill.debug.checkBlockTable=true}, and without that check the GPU kernels clamp a page number outside
 *   [0, P) into it, so a malformed table gives a wrong result but never reads outside the cache; the entries past
 *   the lengths may hold anything, and are never used as a page).</li>
 * </ul>
 * Softmax and accumulation in fp32, one rounding to the output dtype. D ∈ {64, 128, 256} for the custom kernels;
 * the vendor path and the reference take any D that is a multiple of 8 up to 256.
 *
 * <p>Use: {@link #plan} once per shape (it validates, picks the backend and the split count, and allocates the
 * workspace), then {@link GqaDecodePlan#run} every step. {@code run} only launches kernels, allocates nothing and can
 * be captured in a CUDA graph and replayed while the lengths on the device change (run once outside the capture on
 * the capturing thread first, so that the per-thread vendor handles exist). A plan made for the longest context
 * also serves short steps: when every length of a launch is at most maxLen / 2, the custom kernel splits the keys as a
 * plan for that length would ({@link GqaDecodeHeuristics#fittedChunks}, chosen on the device). Tensors on the CPU run
 * the fp64 reference.
 *
 * <p>Backends: {@code CUSTOM} is split-KV decoding on tensor cores (cuda-native/src/main/cuda/gqa_decode/decode_mma.cu);
 * {@code VENDOR} is the composition a user without an attention kernel writes: cuBLAS strided-batched GEMM for
 * the scores (fp32, batched over the G heads of each KV head), a length mask, cuDNN log-softmax, exp to F16/BF16,
 * cuBLAS GEMM with V (paged caches gathered to contiguous first). The vendor path reads K and V up to maxLen for
 * every sequence: rows past len_b must hold finite values (a zero-initialised cache does); their probability is 0.
 * Its mask and probability passes index key positions in 32 bits with a grid of about maxLen threads, so a VENDOR plan
 * takes maxLen up to 2^30 − 1 = 1,073,741,823 (above it AUTO and {@link #decide} do not name the vendor, and a forced
 * VENDOR is refused naming "backend"); a CUSTOM plan up to 2^30 = 1,073,741,824
 * ({@link GqaDecodeHeuristics#CUSTOM_MAX_LEN}: its split plan adds a chunk to a key position in 32 bits), so a
 * longer problem is refused before any launch.
 *
 * @throws ArgumentException before any launch on a bad shape, dtype, device, layout, alignment or closed tensor, or
 *                           (device tensors) o or lse overlapping an input or each other
 * @throws dev.gapfill.core.UnsupportedShapeException when {@code CUSTOM} is forced on a shape it does not cover
 */
public final class GqaDecode {
    private GqaDecode() {}

    /** How K and V are laid out. */
    public enum KvLayout {
        /** Contiguous {@code [B, Hkv, L, D]}. */
        BHLD,
        /** Contiguous {@code [B, L, Hkv, D]}. */
        BLHD,
        /** Pages {@code [P, pageSize, Hkv, D]} and a block table {@code [B, maxPages]}. */
        PAGED
    }

    /**
     * The shape of one decode step; everything a plan depends on.
     *
     * @param batch    B
     * @param qHeads   Hq (a multiple of kvHeads)
     * @param kvHeads  Hkv
     * @param headDim  D (a multiple of 8, at most 256; the custom kernels take 64, 128, 256)
     * @param maxLen   the largest length any sequence may have (the split count and the vendor GEMM sizes follow it)
     * @param layout   cache layout
     * @param pageSize PAGED: positions per page (a power of two); 0 otherwise
     * @param maxPages PAGED: columns of the block table (maxPages·pageSize ≥ maxLen); 0 otherwise
     * @param dtype    F16 or BF16 (q, K, V and o)
     */
    public record Problem(int batch, int qHeads, int kvHeads, int headDim, int maxLen, KvLayout layout, int pageSize,
                          int maxPages, DType dtype) {
        public Problem {
            Checks.positive("batch", batch);
            Checks.positive("qHeads", qHeads);
            Checks.positive("kvHeads", kvHeads);
            Checks.positive("headDim", headDim);
            Checks.positive("maxLen", maxLen);
            if (qHeads % kvHeads != 0) {
                throw new ArgumentException("qHeads", "a multiple of kvHeads=" + kvHeads, String.valueOf(qHeads));
            }
            if (headDim % 8 != 0 || headDim > 256) {
                throw new ArgumentException("headDim", "a multiple of 8 up to 256 (custom kernels: 64, 128, 256)", String.valueOf(headDim));
            }
            if (layout == null) {
                throw new ArgumentException("layout", "one of BHLD, BLHD, PAGED", "null");
            }
            if (dtype != DType.F16 && dtype != DType.BF16) {
                throw new ArgumentException("dtype", "F16 or BF16", String.valueOf(dtype));
            }
            if (layout == KvLayout.PAGED) {
                if (pageSize <= 0 || Integer.bitCount(pageSize) != 1) {
                    throw new ArgumentException("pageSize", "a power of two >= 1", String.valueOf(pageSize));
                }
                Checks.positive("maxPages", maxPages);
                if ((long) maxPages * pageSize < maxLen) {
                    throw new ArgumentException("maxPages", "maxPages·pageSize >= maxLen=" + maxLen,
                            maxPages + "·" + pageSize + " = " + (long) maxPages * pageSize);
                }
            } else if (pageSize != 0 || maxPages != 0) {
                throw new ArgumentException("pageSize/maxPages", "0 for a contiguous layout", pageSize + "/" + maxPages);
            }
        }

        /** A contiguous-cache problem ({@code BHLD} or {@code BLHD}). */
        public static Problem contiguous(int batch, int qHeads, int kvHeads, int headDim, int maxLen, KvLayout layout, DType dtype) {
            return new Problem(batch, qHeads, kvHeads, headDim, maxLen, layout, 0, 0, dtype);
        }

        /** A paged-cache problem; maxLen = maxPages·pageSize. */
        public static Problem paged(int batch, int qHeads, int kvHeads, int headDim, int pageSize, int maxPages, DType dtype) {
            // the layout's own arguments first: maxLen is derived from them, and a zero page count is not a zero maxLen's
            Checks.positive("pageSize", pageSize);
            Checks.positive("maxPages", maxPages);
            long maxLen = (long) pageSize * maxPages;
            if (maxLen > Integer.MAX_VALUE) {
                throw new ArgumentException("maxPages", "maxPages·pageSize < 2^31 (32-bit positions)", maxPages + "·" + pageSize + " = " + maxLen);
            }
            return new Problem(batch, qHeads, kvHeads, headDim, (int) maxLen, KvLayout.PAGED, pageSize, maxPages, dtype);
        }

        /** G = Hq / Hkv. */
        public int groupSize() { return qHeads / kvHeads; }

        /** The problem of these tensors: maxLen is the cache's capacity. */
        public static Problem of(Tensor q, KvCache cache) {
            Checks.open("q", q);
            Checks.rank("q", q, 3);
            Checks.dtype("q", q, java.util.EnumSet.of(DType.F16, DType.BF16));
            if (cache == null) {
                throw new ArgumentException("cache", "a KV cache", "null");
            }
            if (cache.layout() == null) {
                throw new ArgumentException("cache", "a KV cache layout (BHLD, BLHD or PAGED)", "null");
            }
            Checks.open("cache.k", cache.k());
            Checks.rank("cache.k", cache.k(), 4);
            Tensor k = cache.k();
            Checks.int32Indexable("q", q);
            // every path indexes the cache with 64-bit offsets (a plan of Problem.contiguous/paged runs on a cache of
            // 2^31 elements or more): only its dims become ints here
            for (int i = 0; i < 4; i++) {
                if (k.dim(i) > Integer.MAX_VALUE) {
                    throw new ArgumentException("cache.k", "dims below 2^31", java.util.Arrays.toString(k.shape()));
                }
            }
            int b = (int) q.dim(0);
            int hq = (int) q.dim(1);
            int d = (int) q.dim(2);
            if (cache.layout() == KvLayout.PAGED) {
                Checks.open("cache.blockTable", cache.blockTable());
                Checks.rank("cache.blockTable", cache.blockTable(), 2);
                Checks.int32Indexable("cache.blockTable", cache.blockTable());
            }
            try {
                switch (cache.layout()) {
                    case BHLD: return contiguous(b, hq, (int) k.dim(1), d, (int) k.dim(2), KvLayout.BHLD, q.dtype());
                    case BLHD: return contiguous(b, hq, (int) k.dim(2), d, (int) k.dim(1), KvLayout.BLHD, q.dtype());
                    default: return paged(b, hq, (int) k.dim(2), d, (int) k.dim(1), (int) cache.blockTable().dim(1), q.dtype());
                }
            } catch (ArgumentException e) {
                // the record names its own fields; a caller of of(q, cache) passed tensors: name the tensor the field came from
                throw new ArgumentException(tensorOf(e.argument()), e.expected() + " (" + e.argument() + ")", e.received());
            }
        }

        /** The tensor argument of {@link #of} a {@link Problem} field is read from. */
        static String tensorOf(String field) {
            switch (field) {
                case "batch":
                case "qHeads":
                case "headDim":
                case "dtype":
                    return "q";
                case "maxPages":
                    return "cache.blockTable";
                default:  // kvHeads, maxLen, pageSize, pageSize/maxPages
                    return "cache.k";
            }
        }
    }

    /**
     * A KV cache: K and V in one layout, plus the block table for {@code PAGED}.
     *
     * @param layout     the layout of k and v
     * @param k          keys
     * @param v          values (same shape as k)
     * @param blockTable PAGED: I32 {@code [B, maxPages]}; null otherwise
     */
    public record KvCache(KvLayout layout, Tensor k, Tensor v, Tensor blockTable) {
        public static KvCache bhld(Tensor k, Tensor v) { return new KvCache(KvLayout.BHLD, k, v, null); }

        public static KvCache blhd(Tensor k, Tensor v) { return new KvCache(KvLayout.BLHD, k, v, null); }

        public static KvCache paged(Tensor kPages, Tensor vPages, Tensor blockTable) {
            return new KvCache(KvLayout.PAGED, kPages, vPages, blockTable);
        }
    }

    /**
     * Per-call options.
     *
     * @param backend AUTO (heuristics), VENDOR or CUSTOM
     * @param scale   the softmax scale; NaN means 1/√D
     */
    public record Options(Backend backend, double scale) {
        private static final double LOG2E = 1.4426950408889634;

        public Options {
            if (backend == null || backend == Backend.REFERENCE) {
                throw new ArgumentException("backend", "one of AUTO, VENDOR, CUSTOM", String.valueOf(backend));
            }
            // the kernels take the scale in fp32 (the custom path as scale·log2(e)): it must stay finite and non-zero there
            if (!Double.isNaN(scale) && (Double.isInfinite(scale) || (float) scale == 0f || Float.isInfinite((float) (scale * LOG2E)))) {
                throw new ArgumentException("scale", "a non-zero scale finite in fp32, |scale|·log2(e) < 3.4e38 (NaN for 1/sqrt(D))",
                        String.valueOf(scale));
            }
        }

        public static Options defaults() { return new Options(Backend.AUTO, Double.NaN); }

        public Options withBackend(Backend b) { return new Options(b, scale); }

        public Options withScale(double s) { return new Options(backend, s); }

        /** The scale for head dim {@code d}. */
        public double scaleFor(int d) { return Double.isNaN(scale) ? 1.0 / Math.sqrt(d) : scale; }
    }

    /** Plans {@code problem} on {@code device} with default options, allocating on the per-thread stream. */
    public static GqaDecodePlan plan(Problem problem, Device device) {
        return plan(problem, device, Options.defaults(), null);
    }

    /**
     * Validates the shape, picks the backend and split count, and allocates the workspace (stream-ordered on
     * {@code stream}, null: the per-thread stream), zeroing the split counters there. Close the plan to free it.
     * A plan's runs share that workspace. A run on another stream than {@code stream} is ordered after this setup by
     * the plan (a stream wait on an event recorded after it; while that stream is being captured, a host wait for the
     * setup in relaxed capture mode). One case it does not order: a graph captured from a run and launched later on
     * another stream (the graph holds no wait on the setup: launch it on the making stream, or after that stream is
     * synchronized). The caller orders the runs with each other (one at a time): a run racing another run of the same
     * plan on another stream shares its partials and split counters, and both are then wrong. Keep the plan open while
     * any graph captured from its runs may still be launched: the graph's nodes read its workspace.
     *
     * @throws ArgumentException naming "stream" where {@code stream} (or the per-thread stream) is being captured into a
     *                           CUDA graph (since the fiftieth session; the setup became part of that graph, which then
     *                           kept an allocation it never freed and could not be launched twice): make the plan first
     */
    public static GqaDecodePlan plan(Problem problem, Device device, Options options, Stream stream) {
        checkNotNull(problem, device, options);
        if (device.isCuda() && OpStreams.pick(device, stream).isCapturing()) {
            // the workspace's allocation and the counters' zeroing would be nodes of the caller's graph while the plan
            // outlives the capture: that graph could not be launched twice, nor the plan run before its first launch
            throw new ArgumentException("stream", "a stream that is not being captured: make the plan before the capture and"
                    + " capture its runs", "a stream capturing a CUDA graph");
        }
        return planInside(problem, device, options, stream);
    }

    /** {@link #plan} without the capture refusal: {@link #decode}'s one-shot plan, made and closed inside a capture. */
    private static GqaDecodePlan planInside(Problem problem, Device device, Options options, Stream stream) {
        Decision d = decide(problem, device, options);
        return new GqaDecodePlan(problem, device, options, d, stream);
    }

    /** What {@link #plan} would choose on {@code device}, without allocating or running. */
    public static Decision decide(Problem problem, Device device, Options options) {
        checkNotNull(problem, device, options);
        if (device.isCpu()) {
            return Decision.reference();
        }
        DeviceInfo info = Gpu.device(device).info();
        return GqaDecodeHeuristics.decide(problem, info, Backend.resolve(options.backend()));
    }

    private static void checkNotNull(Problem problem, Device device, Options options) {
        if (problem == null) {
            throw new ArgumentException("problem", "a problem", "null");
        }
        if (device == null) {
            throw new ArgumentException("device", "a device", "null");
        }
        if (options == null) {
            throw new ArgumentException("options", "options", "null");
        }
    }

    /** One-shot decode into a new {@code [B, Hq, D]} tensor on q's device, on the per-thread stream (no lse). */
    public static Tensor decode(Tensor q, KvCache cache, Tensor lens, Options options) {
        Problem p = Problem.of(q, cache);
        if (options == null) {
            throw new ArgumentException("options", "options", "null");
        }
        GqaDecodePlan.validateInputs(p, q.device(), q, cache, lens);  // before the output is allocated
        decide(p, q.device(), options);  // and the path's own refusals (CUSTOM or VENDOR forced where they do not apply)
        Tensor out = Tensor.empty(q.device(), q.dtype(), q.shape());
        try {
            decode(q, cache, lens, out, null, options, null);
        } catch (RuntimeException | Error e) {  // an Error too (JavaCPP's or the heap's OutOfMemoryError): no leaked output
            Closing.closeAfter(e, out);
            throw e;
        }
        return out;
    }

    /** What a plan would choose on a device described by {@code info} (pure; usable without a GPU, e.g. in tests). */
    public static Decision decide(Problem problem, DeviceInfo info, Options options) {
        if (info == null) {
            throw new ArgumentException("info", "a DeviceInfo", "null");
        }
        checkNotNull(problem, Device.CPU, options);
        return GqaDecodeHeuristics.decide(problem, info, Backend.resolve(options.backend()));
    }

    /**
     * One-shot decode. Runs the calling thread's kept plan for this problem, options and stream, made on first use (by
     * default up to 8 plans and 8 MiB of device memory per thread and 256 MiB over all threads, the least recently run
     * closed first; a plan over the limits, as the vendor path's score buffers at long contexts, is made and closed per
     * call; the system properties {@code gapfill.keptPlans.*} set the limits, {@code perThread=0} turns keeping off).
     * While the stream is being captured into a CUDA graph a plan is made and closed inside the capture.
     * {@link dev.gapfill.core.Resources#release} closes the kept plans. Holding a plan ({@link #plan}) is the explicit
     * form. The debug overrides that {@link GqaDecodePlan} reads when a plan is made ({@code gapfill.debug.gqa*}) reach
     * only plans made after they are set: a kept plan keeps its configuration (tests that force one use explicit plans).
     * {@code lse} may be null.
     */
    public static void decode(Tensor q, KvCache cache, Tensor lens, Tensor out, Tensor lse, Options options, Stream stream) {
        Problem p = Problem.of(q, cache);
        if (options == null) {
            throw new ArgumentException("options", "options", "null");
        }
        // every argument checked before anything is allocated or queued (a capture would record a refused call's
        // allocations and memsets) and before the kept plans change (a refused call leaves them as they were)
        GqaDecodePlan.validate(p, q.device(), q, cache, lens, out, lse);
        Stream st = q.device().isCpu() ? null : OpStreams.pick(q.device(), stream);
        if (st == null || st.isCapturing()) {
            // the CPU reference; or a graph, which owns what its nodes use: a plan made and closed inside the capture
            try (GqaDecodePlan plan = planInside(p, q.device(), options, stream)) {
                plan.run(q, cache, lens, out, lse, stream);
            }
            return;
        }
        KeptPlans<PlanKey, GqaDecodePlan>.Holder h = KEPT.mine();
        PlanKey key = new PlanKey(q.device().ordinal(), p, Backend.resolve(options.backend()), options.scale());
        GqaDecodePlan plan = h.find(key, st);
        if (plan == null) {
            GqaDecodePlan fresh = plan(p, q.device(), options, st);  // a failure here leaves the kept plans as they were
            if (!h.keep(key, st, fresh)) {  // replaces a plan kept for this problem on another stream
                try (fresh) {  // too large to keep: made and closed per call
                    fresh.run(q, cache, lens, out, lse, st);
                }
                return;
            }
            plan = fresh;
        }
        try {
            plan.run(q, cache, lens, out, lse, st);
        } catch (RuntimeException e) {
            try {
                h.drop(key);
            } catch (RuntimeException dropFailure) {
                e.addSuppressed(dropFailure);  // the run's failure is the one the caller sees
            }
            throw e;
        }
    }

    /** What a kept plan was made for: the device, the problem, the backend asked for and the scale. */
    record PlanKey(int device, Problem problem, Backend requested, double scale) implements KeptPlans.Key {}

    /**
     * The plans the one-shot {@link #decode} keeps per thread ({@link KeptPlans}: by default up to 8 plans and 8 MiB per
     * thread, 256 MiB in all).
     */
    static final KeptPlans<PlanKey, GqaDecodePlan> KEPT = new KeptPlans<>("gqa_decode", GqaDecodePlan::workspaceBytes);
}
