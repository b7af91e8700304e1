package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.Checks;
import dev.gapfill.core.Closing;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.KernelArgs;
import dev.gapfill.core.KernelModule;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.UnsupportedShapeException;
import dev.gapfill.ops.reference.MoeRouteReference;

import java.lang.ref.Reference;
import java.util.EnumSet;
import java.util.Locale;

/**
 * MoE routing on the device: router logits → top-k experts per token → the layout a grouped GEMM reads,
 * without a host round trip.
 *
 * <p>{@code p[t,:] = softmax(logits[t,:])} (or {@code sigmoid}); experts = the k largest logits of token t
 * (ties to the lower expert index); {@code w[t,j] = p[t, e_j]} (divided by {@code Σ_j p[t,e_j]} when
 * renormalising). Rows of the expert-ordered layout are sorted by (expert, token, choice).
 *
 * <p>Legend: T tokens, E experts, k choices per token. Inputs: logits [T, E] (F32, F16, BF16).
 * Outputs ({@link Routing}): offsets I32 [E+1] (expert e owns rows offsets[e]..offsets[e+1]),
 * gather I32 [T·k] (token of each row), weights F32 [T·k] (router weight of each row), rowOf I32 [T, k]
 * (row of token t's j-th choice, for the scatter-add back), topkIds I32 [T, k], topkWeights F32 [T, k].
 *
 * <p>Backends: CUSTOM (one kernel up to T = 16 (32 where E ≤ 64), two below T·k = 8192 (4096 where E ≥ 64), four from there on; no vendor
 * library routes) for device tensors, where VENDOR throws {@link UnsupportedShapeException}; tensors on the CPU always run the reference, whatever the backend
 * ({@link Backend}). Limits: E ≤ 512, 1 ≤ k ≤ min(E, 32). NaN logits (not meaningful input) are read as −∞ by both
 * the kernels and the reference. On a GPU the six outputs must not overlap logits
 * or each other (the sort kernels read topkIds and topkWeights while they write the other four).
 */
public final class MoeRoute {
    /** How router logits become weights. */
    public enum Score { SOFTMAX, SIGMOID }

    /**
     * @param topK        choices per token (k)
     * @param score       softmax over all experts, or an independent sigmoid per expert
     * @param renormalize divide each token's k weights by their sum
     * @param backend     AUTO or CUSTOM (VENDOR has no implementation)
     */
    public record Options(int topK, Score score, boolean renormalize, Backend backend) {
        public static Options topK(int k) {
            return new Options(k, Score.SOFTMAX, true, Backend.AUTO);
        }

        public Options withScore(Score s) { return new Options(topK, s, renormalize, backend); }

        public Options withRenormalize(boolean r) { return new Options(topK, score, r, backend); }

        public Options withBackend(Backend b) { return new Options(topK, score, renormalize, b); }
    }

    /** The routing tensors of T tokens over E experts (all on one device). Closing closes them all. */
    public static final class Routing implements AutoCloseable {
        public final Tensor offsets;
        public final Tensor gather;
        public final Tensor weights;
        public final Tensor rowOf;
        public final Tensor topkIds;
        public final Tensor topkWeights;

        Routing(Tensor offsets, Tensor gather, Tensor weights, Tensor rowOf, Tensor topkIds, Tensor topkWeights) {
            this.offsets = offsets;
            this.gather = gather;
            this.weights = weights;
            this.rowOf = rowOf;
            this.topkIds = topkIds;
            this.topkWeights = topkWeights;
        }

        /** Allocates the outputs for T tokens, E experts, k choices on {@code device}. */
        public static Routing allocate(Device device, int tokens, int experts, int k) {
            if (device == null) {
                throw new ArgumentException("device", "a device", "null");
            }
            Checks.positive("tokens", tokens);
            Checks.positive("experts", experts);
            Checks.positive("k", k);
            if ((long) tokens * k > MAX_ENTRIES) {
                throw new ArgumentException("tokens", "tokens·k <= 2^31 - 1025 (32-bit indexing, loop steps included)", tokens + "·" + k);
            }
            Tensor[] t = new Tensor[6];
            try {
                t[0] = Tensor.empty(device, DType.I32, experts + 1L);
                t[1] = Tensor.empty(device, DType.I32, (long) tokens * k);
                t[2] = Tensor.empty(device, DType.F32, (long) tokens * k);
                t[3] = Tensor.empty(device, DType.I32, tokens, k);
                t[4] = Tensor.empty(device, DType.I32, tokens, k);
                t[5] = Tensor.empty(device, DType.F32, tokens, k);
            } catch (RuntimeException | Error e) {  // an Error too (JavaCPP's or the heap's OutOfMemoryError): tensors 0..i-1 not leaked
                Closing.closeAfter(e, t);
                throw e;
            }
            return new Routing(t[0], t[1], t[2], t[3], t[4], t[5]);
        }

        /**
         * Closes every tensor still open (one the caller closed already is skipped), also when one close fails: the first
         * failure is thrown, later ones suppressed into it.
         */
        @Override public void close() {
            Closing.closeAll(java.util.Arrays.stream(new Tensor[] {offsets, gather, weights, rowOf, topkIds, topkWeights})
                    .filter(t -> !t.isClosed()).toArray(Tensor[]::new));
        }
    }

    public static final int MAX_EXPERTS = 512;
    public static final int MAX_TOP_K = 32;
    private static final KernelModule MODULE = KernelModule.of("moe_route/route");
    private static final int TOPK_WARPS_PER_BLOCK = 8;
    private static final int SCATTER_WARPS = 16;
    /**
     * From this many entries (T·k) on, the sort runs over chunks, one block each, in three launches (counts, bases,
     * scatter) instead of one block: at 4096 entries the one block took 10 µs more than at 512 on an H100 (24.7 against
     * 14.2 µs for E = 64, k = 8), at 131 072 entries 424 µs.
     */
    static final int CHUNKED_FROM = 8192;
    /**
     * With E ≥ 64 the chunked sort starts at this many entries: the one block's time per entry grows with E. On an H100
     * (a35d849, stage probe, same top-k before both, outputs identical) the chunked sort took 0.94× the one block's
     * time at 4096 entries for E = 64, 0.92× for E = 512, 0.71–0.73× at 6144 (E = 64 and 160), and 1.06–1.69× at 3072
     * and below; for E = 8 (k = 2) it was 1.28× at 4096 entries and 0.99× at 8190, so small E keeps CHUNKED_FROM.
     */
    static final int CHUNKED_FROM_E64 = 4096;
    /**
     * Up to this many tokens one block selects and sorts in one launch (route.cu's route_block: one token per warp),
     * if its shared memory fits the default 48 KiB (it always does up to 16 tokens). On an H100 (7b0a9b9, stage probe)
     * the one launch took 0.67–0.84× the two launches' time at T ≤ 16 (E = 8 to 512).
     */
    static final int ONE_LAUNCH_MAX_TOKENS = 16;
    /**
     * Where E ≤ {@link #ONE_LAUNCH_PAIRS_MAX_EXPERTS} (two logits per lane or fewer) the one launch goes on up to this
     * many tokens, its warps selecting two tokens each in lockstep. On an H100 (aac060f, stage probe, outputs
     * identical) it took 0.92–0.93× the two launches' time at T = 24 and 32 for E = 64 (k = 8) and 0.76–0.77× for E = 8
     * (k = 2), but 0.99–1.01× for E = 128, 1.11–1.15× for E = 160 and 1.41–1.50× for E = 512, whose longer per-lane
     * chains the pair lengthens more; at T = 48 and 64 (a warp's tokens in turn) 1.20–1.41× for E = 64.
     */
    static final int ONE_LAUNCH_PAIRS_MAX_TOKENS = 32;
    static final int ONE_LAUNCH_PAIRS_MAX_EXPERTS = 64;
    private static final int ONE_LAUNCH_MAX_SMEM = 48 * 1024;
    /**
     * Debug: the one launch up to this many tokens for every E instead of {@link #ONE_LAUNCH_MAX_TOKENS} or
     * {@link #ONE_LAUNCH_PAIRS_MAX_TOKENS} (17 to 32 run two tokens per warp in lockstep, more one after the other),
     * for the GPU test and for measuring where it stops paying.
     */
    public static final String DEBUG_ONE_LAUNCH_MAX_TOKENS = "gapfill.debug.moeRouteOneLaunchMaxTokens";
    /** Debug: never the one-launch path (tests compare it with the two launches). */
    public static final String DEBUG_TWO_LAUNCHES = "gapfill.debug.moeRouteTwoLaunches";
    private static final int COUNT_THREADS = 256;
    private static final int BASES_THREADS = 1024;

    /**
     * Logits per lane of the top-k warp (route.cu's SLOTS): the power of two at least ceil(E / 32), so a round of the
     * warp's argmax scans only slots that can hold an expert.
     */
    static int topkSlots(long experts) {
        int slots = 1;
        while (32L * slots < experts) {
            slots *= 2;
        }
        return slots;
    }

    /** Shared memory of the one-launch kernel: the sort's histograms and bases, then T·k ids and T·k weights. */
    static long oneLaunchSmem(long tokens, long experts, int k) {
        return (SCATTER_WARPS * experts + experts + 1 + 2 * tokens * k) * 4;
    }

    /** Do selection and sort run in one launch (small T)? */
    static boolean oneLaunch(long tokens, long experts, int k) {
        int limit = experts <= ONE_LAUNCH_PAIRS_MAX_EXPERTS ? ONE_LAUNCH_PAIRS_MAX_TOKENS : ONE_LAUNCH_MAX_TOKENS;
        return tokens <= Integer.getInteger(DEBUG_ONE_LAUNCH_MAX_TOKENS, limit)
                && oneLaunchSmem(tokens, experts, k) <= ONE_LAUNCH_MAX_SMEM
                && !Boolean.getBoolean(DEBUG_TWO_LAUNCHES);
    }

    /** From how many entries (T·k) the sort over {@code experts} runs over chunks. */
    static int chunkedFrom(long experts) {
        return experts >= 64 ? CHUNKED_FROM_E64 : CHUNKED_FROM;
    }

    /** Does the sort of {@code entries} (T·k) over {@code experts} run over chunks? */
    static boolean chunked(long entries, long experts) {
        return entries >= chunkedFrom(experts);
    }

    /**
     * Entries per chunk of the chunked sort: at least 1024 (so at least E ≤ 512, room for a chunk's counts at its own
     * first entries of rowOf) and at most about 1024 chunks, which bounds the one-block bases step.
     */
    static int chunkEntries(long entries) {
        return (int) Math.max(1024, (entries + 1023) / 1024);
    }
    private static final String[] OUT_NAMES = {"out.offsets", "out.gather", "out.weights", "out.rowOf", "out.topkIds", "out.topkWeights"};

    private MoeRoute() {}

    /**
     * Routes on the per-thread stream into new tensors.
     *
     * @throws ArgumentException naming the argument, before any allocation or launch: {@code logits} closed, not 2-D,
     *         not F32/F16/BF16, not contiguous, or with more than {@value #MAX_EXPERTS} experts; {@code options} null,
     *         a null score, a null or REFERENCE backend, k outside [1, min(E, {@value #MAX_TOP_K})], or T·k over
     *         2^31 − 1025
     * @throws UnsupportedShapeException where VENDOR is requested (no vendor library implements the routing)
     */
    public static Routing route(Tensor logits, Options options) {
        Checks.open("logits", logits);
        Checks.rank("logits", logits, 2);
        Checks.dtype("logits", logits, EnumSet.of(DType.F32, DType.F16, DType.BF16));  // before allocating the outputs
        Checks.contiguous("logits", logits);
        validateOptions(options, logits.dim(1));
        checkTokens("logits", logits.dim(0), options.topK());
        checkBackend(logits, options);  // before allocating the outputs
        Routing r = Routing.allocate(logits.device(), (int) logits.dim(0), (int) logits.dim(1), options.topK());
        try {
            route(logits, options, r, null);
        } catch (RuntimeException | Error e) {  // an Error too (JavaCPP's or the heap's OutOfMemoryError): no leaked outputs
            Closing.closeAfter(e, r.offsets, r.gather, r.weights, r.rowOf, r.topkIds, r.topkWeights);
            throw e;
        }
        return r;
    }
    /**
     * Routes into caller-supplied outputs on {@code stream} (null: per-thread). Allocates nothing; graph-capturable.
     *
     * @throws ArgumentException naming the argument, before any launch: as {@link #route(Tensor, Options)}, and
     *         {@code out} null or its tensors not shaped, typed or placed for these logits and k, or overlapping
     *         each other or the logits, or {@code stream} closed or on another device
     * @throws UnsupportedShapeException where VENDOR is requested
     */
    public static void route(Tensor logits, Options options, Routing out, Stream stream) {
        Checks.open("logits", logits);
        Checks.rank("logits", logits, 2);
        Checks.dtype("logits", logits, EnumSet.of(DType.F32, DType.F16, DType.BF16));
        Checks.contiguous("logits", logits);
        long t = logits.dim(0);
        long e = logits.dim(1);
        validateOptions(options, e);
        int k = options.topK();
        checkTokens("logits", t, k);
        if (out == null) {
            throw new ArgumentException("out", "a Routing", "null");
        }
        check(out.offsets, "out.offsets", DType.I32, logits.device(), e + 1);
        check(out.gather, "out.gather", DType.I32, logits.device(), t * k);
        check(out.weights, "out.weights", DType.F32, logits.device(), t * k);
        check(out.rowOf, "out.rowOf", DType.I32, logits.device(), t, k);
        check(out.topkIds, "out.topkIds", DType.I32, logits.device(), t, k);
        check(out.topkWeights, "out.topkWeights", DType.F32, logits.device(), t, k);
        Tensor[] outs = {out.offsets, out.gather, out.weights, out.rowOf, out.topkIds, out.topkWeights};
        for (int i = 0; i < outs.length; i++) {
            Checks.noOverlap(OUT_NAMES[i], outs[i], "logits", logits);
            for (int j = 0; j < i; j++) {
                Checks.noOverlap(OUT_NAMES[i], outs[i], OUT_NAMES[j], outs[j]);
            }
        }
        if (logits.device().isCpu()) {  // the reference, whatever the backend (Backend: CPU tensors always run it)
            MoeRouteReference.route(logits, k, options.score() == Score.SIGMOID, options.renormalize(), out);
            return;
        }
        checkBackend(logits, options);
        Stream s = OpStreams.pick(logits.device(), stream);
        String dt = logits.dtype().name().toLowerCase(Locale.ROOT);
        int sg = options.score() == Score.SIGMOID ? 1 : 0;
        int rn = options.renormalize() ? 1 : 0;
        // before the launches: work already queued orders the frees if a later one fails
        OpStreams.record(s, logits, out.offsets, out.gather, out.weights, out.rowOf, out.topkIds, out.topkWeights);
        try {
            if (oneLaunch(t, e, k)) {
                MODULE.function(s.cudaDevice(), "moe_route_block_" + dt + "_s" + topkSlots(e)).launch(s, 1, 1, 1,
                        32 * SCATTER_WARPS, 1, 1, (int) oneLaunchSmem(t, e, k),
                        KernelArgs.begin().ptr(logits).i32((int) t).i32((int) e).i32(k).i32(sg).i32(rn).ptr(out.topkIds)
                                .ptr(out.topkWeights).ptr(out.offsets).ptr(out.gather).ptr(out.weights).ptr(out.rowOf));
            } else {
                launchTopkAndSort(s, logits, out, t, e, k, dt, sg, rn);
            }
        } finally {  // the tensors stay reachable until every launch is queued: their cleaner must not free them before (recorded above)
            Reference.reachabilityFence(logits);
            Reference.reachabilityFence(out);  // the Routing holds its six tensors
        }
    }

    /** Above the one launch: top-k (one warp per token), then the one-block or the chunked sort. */
    private static void launchTopkAndSort(Stream s, Tensor logits, Routing out, long t, long e, int k, String dt, int sg,
                                          int rn) {
        String sym = "moe_topk_" + dt + "_s" + topkSlots(e);
        int grid = (int) ((t + TOPK_WARPS_PER_BLOCK - 1) / TOPK_WARPS_PER_BLOCK);
        MODULE.function(s.cudaDevice(), sym).launch(s, grid, 1, 1, 32 * TOPK_WARPS_PER_BLOCK, 1, 1, 0,
                KernelArgs.begin().ptr(logits).i32((int) t).i32((int) e).i32(k).i32(sg).i32(rn).ptr(out.topkIds)
                        .ptr(out.topkWeights));
        int entries = (int) (t * k);
        int sortSmem = (int) ((SCATTER_WARPS * e + e + 1) * 4);
        if (!chunked(entries, e)) {
            MODULE.function(s.cudaDevice(), "moe_scatter").launch(s, 1, 1, 1, 32 * SCATTER_WARPS, 1, 1, sortSmem,
                    KernelArgs.begin().ptr(out.topkIds).ptr(out.topkWeights).i32(entries).i32(k).i32((int) e)
                            .ptr(out.offsets).ptr(out.gather).ptr(out.weights).ptr(out.rowOf));
        } else {
            // The chunk counts, then their bases, live in rowOf at each chunk's first E entries until the chunk's
            // own sort block overwrites them (route.cu), so the chunked sort needs no workspace.
            int chunk = chunkEntries(entries);
            int chunks = entries / chunk;
            MODULE.function(s.cudaDevice(), "moe_chunk_counts").launch(s, chunks, 1, 1, COUNT_THREADS, 1, 1, (int) (e * 4),
                    KernelArgs.begin().ptr(out.topkIds).i32(entries).i32(chunk).i32(chunks).i32((int) e).ptr(out.rowOf));
            int parts = Math.max(1, BASES_THREADS / (int) e);
            MODULE.function(s.cudaDevice(), "moe_chunk_bases").launch(s, 1, 1, 1, BASES_THREADS, 1, 1,
                    (int) ((parts * e + e + 1) * 4),
                    KernelArgs.begin().i32(entries).i32(chunk).i32(chunks).i32((int) e).ptr(out.offsets).ptr(out.rowOf));
            MODULE.function(s.cudaDevice(), "moe_chunk_scatter").launch(s, chunks, 1, 1, 32 * SCATTER_WARPS, 1, 1, sortSmem,
                    KernelArgs.begin().ptr(out.topkIds).ptr(out.topkWeights).i32(entries).i32(chunk).i32(chunks).i32(k)
                            .i32((int) e).ptr(out.gather).ptr(out.weights).ptr(out.rowOf));
        }
    }

    private static void validateOptions(Options options, long e) {
        if (options == null) {
            throw new ArgumentException("options", "routing options", "null");
        }
        if (e > MAX_EXPERTS) {
            throw new ArgumentException("logits", "at most " + MAX_EXPERTS + " experts (dim 1)", String.valueOf(e));
        }
        int k = options.topK();
        if (k < 1 || k > Math.min(e, MAX_TOP_K)) {
            throw new ArgumentException("options.topK", "1 <= k <= min(E=" + e + ", " + MAX_TOP_K + ")", String.valueOf(k));
        }
        if (options.score() == null) {
            throw new ArgumentException("options.score", "SOFTMAX or SIGMOID", "null");
        }
        if (options.backend() == null || options.backend() == Backend.REFERENCE) {
            throw new ArgumentException("options.backend", "AUTO or CUSTOM (VENDOR has no implementation)", String.valueOf(options.backend()));
        }
    }

    /** Device tensors: VENDOR (forced, or through {@value Backend#PROPERTY}) has no implementation. CPU tensors run the reference. */
    private static void checkBackend(Tensor logits, Options options) {
        if (logits.device().isCuda() && Backend.resolve(options.backend()) == Backend.VENDOR) {
            throw new UnsupportedShapeException("options.backend", "AUTO or CUSTOM (no vendor library implements MoE routing)", "VENDOR");
        }
    }

    /**
     * The most entries (T·k) the kernels index: 32-bit positions whose grid-stride and per-warp loops step up to 1024
     * past the last entry (route.cu's chunked counts and sort), so the sum must not wrap.
     */
    static final long MAX_ENTRIES = Integer.MAX_VALUE - 1024L;

    /** {@code name}: what carries T (the logits' rows, or decide's {@code tokens}). */
    private static void checkTokens(String name, long t, int k) {
        if (t > MAX_ENTRIES / k) {  // T·k > MAX_ENTRIES, without forming T·k (decide's T is any long: the product could wrap)
            throw new ArgumentException(name, "T·k <= 2^31 - 1025 (32-bit indexing, loop steps included)", t + "·" + k);
        }
    }

    /**
     * What runs for T tokens over E experts: the custom kernels on a GPU. Up to T = 16 (32 where E ≤ 64, two tokens a
     * warp) one block of 16 warps selects every token and sorts the entries (one launch). Above, top-k takes one warp per
     * token; below 8192 entries (T·k; 4096 where E ≥ 64) one block sorts them by expert (two launches in all), from there on the sort
     * runs over chunks of at least 1024 entries, one block each (four launches).
     */
    public static Decision decide(long tokens, long experts, int k, DeviceInfo info) {
        Checks.positive("tokens", tokens);
        Checks.positive("experts", experts);
        if (experts > MAX_EXPERTS) {
            throw new ArgumentException("experts", "at most " + MAX_EXPERTS, String.valueOf(experts));
        }
        if (k < 1 || k > Math.min(experts, MAX_TOP_K)) {
            throw new ArgumentException("k", "1 <= k <= min(E=" + experts + ", " + MAX_TOP_K + ")", String.valueOf(k));
        }
        checkTokens("tokens", tokens, k);
        if (info == null) {
            return Decision.reference();
        }
        if (Backend.resolve(Backend.AUTO) == Backend.VENDOR) {  // what route() does on a device under gapfill.backend=vendor
            throw new UnsupportedShapeException("backend", "AUTO or CUSTOM (no vendor library implements MoE routing; "
                    + Backend.PROPERTY + " asks for the vendor)", "VENDOR");
        }
        long entries = tokens * k;
        if (oneLaunch(tokens, experts, k)) {
            return Decision.lazy(Backend.CUSTOM, "route_block",
                    () -> "no vendor routing exists; one block of " + SCATTER_WARPS + " warps selects the top-" + k + " of "
                            + tokens + " tokens (" + topkSlots(experts) + " logits per lane, "
                            + (tokens <= SCATTER_WARPS ? "one warp per token"
                                    : tokens <= 2L * SCATTER_WARPS ? "two tokens per warp in lockstep"
                                    : "up to " + (tokens + SCATTER_WARPS - 1) / SCATTER_WARPS + " tokens per warp in turn")
                            + ") and sorts the " + entries
                            + " entries by expert in shared memory, one launch (deterministic)");
        }
        if (!chunked(entries, experts)) {
            return Decision.lazy(Backend.CUSTOM, "topk_warp+scatter_block",
                    () -> "no vendor routing exists; top-k: one warp per token over " + tokens + " tokens (" + topkSlots(experts)
                            + " logits per lane), scatter: one block of "
                            + SCATTER_WARPS + " warps sorts " + entries + " entries by expert (deterministic)");
        }
        int chunk = chunkEntries(entries);
        return Decision.lazy(Backend.CUSTOM, "topk_warp+scatter_chunks",
                () -> "no vendor routing exists; top-k: one warp per token over " + tokens + " tokens (" + topkSlots(experts)
                        + " logits per lane), scatter: " + entries
                        + " entries (at least " + chunkedFrom(experts) + ") sorted by expert in " + entries / chunk + " chunks of "
                        + chunk + " or more, one block each, after their counts and bases (deterministic)");
    }

    private static void check(Tensor t, String name, DType dt, Device d, long... shape) {
        Checks.open(name, t);
        Checks.dtype(name, t, dt);
        Checks.sameDevice(name, t, d);
        Checks.contiguous(name, t);
        Checks.shape(name, t, "", shape);
    }

}
