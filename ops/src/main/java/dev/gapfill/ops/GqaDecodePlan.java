package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.Checks;
import dev.gapfill.core.Cleanup;
import dev.gapfill.core.CudaDevice;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.DevicePointer;
import dev.gapfill.core.InitcheckAid;
import dev.gapfill.core.KernelArgs;
import dev.gapfill.core.KernelFunction;
import dev.gapfill.core.KernelModule;
import dev.gapfill.core.Pointers;
import dev.gapfill.core.Event;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.VendorHandles;
import dev.gapfill.ops.GqaDecode.KvCache;
import dev.gapfill.ops.GqaDecode.KvLayout;
import dev.gapfill.ops.GqaDecode.Problem;
import dev.gapfill.ops.reference.GqaDecodeReference;
import org.bytedeco.cuda.cublas.cublasContext;
import org.bytedeco.cuda.cudnn.cudnnTensorStruct;
import org.bytedeco.cuda.global.cublas;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.cuda.global.cudnn;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.Pointer;

import java.lang.ref.Reference;
import java.util.Locale;

/**
 * A planned {@link GqaDecode} step for one {@link Problem} on one device: the backend, the split count and the
 * workspace are fixed here; {@link #run} validates the tensors and only launches (no allocation, CUDA-graph
 * capturable while the lengths on the device change). Close it to free the workspace (stream-ordered after the last
 * run). Not thread-safe: one plan per thread.
 *
 * <p>Workspace: CUSTOM with splits > 1: partial o {@code [B, Hq, splits, D]} F32, partial lse
 * {@code [B, Hq, splits]} F32 and one I32 ticket counter per (sequence, KV head, head tile), zeroed here once; the
 * last split of each group to finish merges and resets its counter, so it is zero again after every run. VENDOR: scores and log-probabilities {@code [B·Hq, maxLen]} F32, probabilities in the
 * cache dtype, and for PAGED two contiguous {@code [B, Hkv, maxLen, D]} gather buffers (zeroed once here).
 */
public final class GqaDecodePlan implements AutoCloseable {
    private static final KernelModule MMA = KernelModule.of("gqa_decode/decode_mma");
    private static final KernelModule GLUE = KernelModule.of("gqa_decode/vendor_glue");
    private static final double LOG2E = 1.4426950408889634;
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(GqaDecodePlan.class);
    /**
     * System property: before every GPU run of a PAGED plan, copy the lengths and the block table to the host and check
     * that every page a sequence reads (positions below its clamped length) is in [0, P). Without it the kernels clamp
     * such an entry into [0, P) (it reads the nearest page: a wrong result, never an access outside the cache).
     * Synchronises the stream, so a run under graph capture is not checked (a warning says so once). CPU plans always
     * check.
     */
    public static final String DEBUG_CHECK_BLOCK_TABLE = "gapfill.debug.checkBlockTable";
    private static final java.util.concurrent.atomic.AtomicBoolean CAPTURE_SKIP_LOGGED = new java.util.concurrent.atomic.AtomicBoolean();
    /**
     * System property, read when a plan is made: {@code true} makes its custom launches keep the plan's split chunk
     * (ceil(maxLen / splits)) whatever the lengths, as before the fitted chunks; for A/B measurements
     * ({@code docs/ops/gqa_decode.md}). By default a launch whose longest length is at most maxLen / 2 takes the chunk
     * {@link GqaDecodeHeuristics#fittedChunks} gives that length, chosen on the device.
     */
    public static final String DEBUG_PLAN_CHUNK = "gapfill.debug.gqaPlanChunk";
    /**
     * System properties, read when a custom plan is made, for split sweeps ({@code GqaDecodeSplitProbe}): a positive
     * {@code gapfill.debug.gqaSplits} replaces the heuristics' split count (the chunk becomes ceil(maxLen / s) rounded
     * up to 64, and the count what that chunk needs), and {@code gapfill.debug.gqaWarps} (4 or 8; 8 only at D = 64)
     * the warps per block ({@link GqaDecodeHeuristics#forcedSplit}).
     */
    public static final String DEBUG_SPLITS = "gapfill.debug.gqaSplits";
    /** See {@link #DEBUG_SPLITS}. */
    public static final String DEBUG_WARPS = "gapfill.debug.gqaWarps";
    /**
     * System property, read when a custom plan is made: {@code true} keeps the plan's global split merge where
     * {@link GqaDecodeHeuristics#withCluster} would take the sm_90 cluster kernels (A/B runs); the plan's
     * {@link #decision()} then names the kernel that runs. Forced splits or warps ({@link #DEBUG_SPLITS}) never take a
     * cluster.
     */
    public static final String DEBUG_NO_CLUSTER = "gapfill.debug.gqaNoCluster";
    /**
     * System property, read when a custom plan is made: {@code true} makes a D = 128 plan of 4-warp blocks run the
     * 2-stage entries ({@code gqa_decode_mma_s2_*_d128}) that devices with 99 KiB of opt-in shared memory per block take
     * ({@link GqaDecodeHeuristics#stages(int, DeviceInfo)}), and keeps the global split merge (the cluster kernels have
     * 3 stages): so that an H100 can test them. Same math in the same order, so the same bits.
     */
    public static final String DEBUG_TWO_STAGES = "gapfill.debug.gqaTwoStages";

    private final Problem p;
    private final Device device;
    private final Decision decision;
    private final double scale;
    private final GqaDecodeHeuristics.Split split;
    private final int stages;  // of each warp's ring in the custom kernel (GqaDecodeHeuristics.stages(int, DeviceInfo))
    private final int[] fitChunks;
    private final Tensor partO;
    private final Tensor partLse;
    private final Tensor counters;
    private final Tensor scores;
    private final Tensor logp;
    private final Tensor probs;
    private final Tensor gatherK;
    private final Tensor gatherV;
    private final cudnnTensorStruct softmaxDesc;
    private final FloatPointer alphaScores;
    private final FloatPointer one;
    private final FloatPointer zero;
    private final KernelFunction splitFn;
    private final KernelFunction gatherFn;
    private final KernelFunction maskFn;
    private final KernelFunction probsFn;
    /**
     * Recorded on the making stream after the workspace's allocation and zeroing (null: nothing was queued, the plan
     * was made under graph capture, or the setup is known complete); a run on another stream waits for it.
     */
    private Event setupDone;
    private final Stream setupStream;
    private Stream orderedStream;  // the last other stream made to wait for setupDone
    private boolean closed;

    GqaDecodePlan(Problem problem, Device device, GqaDecode.Options options, Decision decision, Stream stream) {
        this.p = problem;
        this.device = device;
        this.scale = options.scaleFor(problem.headDim());
        Tensor po = null;
        Tensor pl = null;
        Tensor ct = null;
        Tensor sc = null;
        Tensor lp = null;
        Tensor pr = null;
        Tensor gk = null;
        Tensor gv = null;
        cudnnTensorStruct desc = null;
        FloatPointer a = null;
        FloatPointer o1 = null;
        FloatPointer z = null;
        KernelFunction sf = null;
        KernelFunction gf = null;
        KernelFunction maf = null;
        KernelFunction pf = null;
        GqaDecodeHeuristics.Split sp = new GqaDecodeHeuristics.Split(1, problem.maxLen());
        int[] fit = new int[GqaDecodeHeuristics.FIT_LEVELS];
        String clusterOff = null;  // why a plan the rule would cluster keeps the global merge
        int st = GqaDecodeHeuristics.stages(problem.headDim());
        String stageNote = null;  // why the plan's rings are shorter than the default
        String t = problem.dtype().name().toLowerCase(Locale.ROOT);
        Event done = null;
        Stream made = null;
        try {
            if (device.isCuda()) {
                Stream s = OpStreams.pick(device, stream);
                made = s;
                CudaDevice cd = s.cudaDevice();
                long bhq = (long) problem.batch() * problem.qHeads();
                if (decision.backend() == Backend.CUSTOM) {
                    sp = GqaDecodeHeuristics.splits(problem, cd.info());
                    int forcedSplits = Integer.getInteger(DEBUG_SPLITS, 0);
                    int forcedWarps = Integer.getInteger(DEBUG_WARPS, 0);
                    if (forcedSplits > 0 || forcedWarps > 0) {
                        clusterOff = DEBUG_SPLITS + "/" + DEBUG_WARPS;
                        sp = GqaDecodeHeuristics.forcedSplit(problem, forcedSplits > 0 ? forcedSplits : sp.splits(),
                                forcedWarps > 0 ? forcedWarps : sp.warps(), cd.info());
                    } else if (Boolean.getBoolean(DEBUG_NO_CLUSTER)) {
                        clusterOff = DEBUG_NO_CLUSTER;
                    } else if (Boolean.getBoolean(DEBUG_TWO_STAGES) && problem.headDim() == 128) {
                        clusterOff = DEBUG_TWO_STAGES;
                    } else {
                        GqaDecodeHeuristics.Split global = sp;
                        sp = GqaDecodeHeuristics.withCluster(problem, global, cd.info());
                        if (sp.cluster() > 0) {
                            // the device must hold every cluster of the launch at once (a GPU partition whose GPCs lack
                            // the SMs would refuse or serialise them): else the global merge
                            int tiles = GqaDecodeHeuristics.headTiles(problem.groupSize());
                            KernelFunction cf = MMA.function(cd, "gqa_decode_mma_" + sp.kernelInfix() + t + "_d" + problem.headDim());
                            int fits = cf.maxActiveClusters(sp.splits(), problem.kvHeads() * tiles, problem.batch(), sp.threads(),
                                    GqaDecodeHeuristics.sharedBytes(problem.headDim(), sp.warps()));
                            long clusters = (long) problem.batch() * problem.kvHeads() * tiles;
                            if (!GqaDecodeHeuristics.clustersFit(clusters, fits)) {
                                LOG.info("gqaDecode {}: {} clusters of {} blocks, the device holds {} at once; the global split merge instead",
                                        problem, clusters, sp.cluster(), fits);
                                sp = global;
                                clusterOff = "the device holds " + fits + " of its " + clusters + " clusters at once";
                            }
                        }
                    }
                    if (!Boolean.getBoolean(DEBUG_PLAN_CHUNK)) {
                        fit = GqaDecodeHeuristics.fittedChunks(problem, sp, cd.info());
                    }
                    st = Boolean.getBoolean(DEBUG_TWO_STAGES) ? GqaDecodeHeuristics.TWO_STAGES
                            : GqaDecodeHeuristics.stages(problem.headDim(), cd.info());  // stageInfix says where it applies
                    if (!GqaDecodeHeuristics.stageInfix(problem, sp, st).isEmpty()) {
                        stageNote = "rings of " + st + " stages (" + (Boolean.getBoolean(DEBUG_TWO_STAGES) ? DEBUG_TWO_STAGES
                                : "the 3-stage block does not fit " + cd.info().smemPerBlockOptin() + " B per block") + ")";
                    } else {
                        st = GqaDecodeHeuristics.stages(problem.headDim());  // w8 and cluster kernels keep their default
                    }
                    sf = MMA.function(cd, "gqa_decode_mma_" + sp.kernelInfix() + GqaDecodeHeuristics.stageInfix(problem, sp, st) + t
                            + "_d" + problem.headDim());
                    if (sp.splits() > 1 && sp.cluster() == 0) {  // a cluster merges in shared memory: no workspace
                        po = Tensor.empty(device, DType.F32, s, bhq * sp.splits() * problem.headDim());
                        pl = Tensor.empty(device, DType.F32, s, bhq * sp.splits());
                        ct = Tensor.empty(device, DType.I32, s,
                                (long) problem.batch() * problem.kvHeads() * GqaDecodeHeuristics.headTiles(problem.groupSize()));
                        ct.fillBytes(0, s);  // the kernel leaves every counter at 0 after each run
                    }
                } else {
                    glueColumns(problem.maxLen());  // before any allocation
                    long n = bhq * problem.maxLen();
                    sc = Tensor.empty(device, DType.F32, s, n);
                    lp = Tensor.empty(device, DType.F32, s, n);
                    pr = Tensor.empty(device, problem.dtype(), s, n);
                    maf = GLUE.function(cd, "gqa_mask_scores");
                    pf = GLUE.function(cd, "gqa_probs_" + t);
                    if (problem.layout() == KvLayout.PAGED) {
                        gf = GLUE.function(cd, "gqa_gather_" + t);
                        long kv = (long) problem.batch() * problem.kvHeads() * problem.maxLen() * problem.headDim();
                        gk = Tensor.empty(device, problem.dtype(), s, kv);
                        gv = Tensor.empty(device, problem.dtype(), s, kv);
                        gk.fillBytes(0, s);  // rows past a length stay finite: their probability is exactly 0
                        gv.fillBytes(0, s);
                    }
                    VendorHandles.cudnn(s);  // this thread's handle, created here (outside a capture, since plan() refuses one)
                    cudnnTensorStruct created = new cudnnTensorStruct();
                    VendorHandles.checkDnn(cd, cudnn.cudnnCreateTensorDescriptor(created), "cudnnCreateTensorDescriptor");
                    desc = created;  // only once created: the catch below destroys only what exists
                    VendorHandles.checkDnn(cd, cudnn.cudnnSetTensor4dDescriptor(desc, cudnn.CUDNN_TENSOR_NCHW, cudnn.CUDNN_DATA_FLOAT,
                            (int) bhq, problem.maxLen(), 1, 1), "cudnnSetTensor4dDescriptor([" + bhq + ", " + problem.maxLen() + ", 1, 1])");
                    VendorHandles.cublas(s);
                    a = Pointers.outliveScopes(new FloatPointer((float) scale));  // the plan's, past a caller's PointerScope
                    o1 = Pointers.outliveScopes(new FloatPointer(1f));
                    z = Pointers.outliveScopes(new FloatPointer(0f));
                }
                // a run on another stream must not start before the workspace exists and is zeroed (run() waits)
                boolean queued = po != null || sc != null;
                if (queued && !s.isCapturing()) {
                    done = Event.forOrdering(device);
                    done.record(s);  // a failure here leaves done for the catch below to destroy
                }
            }
        } catch (RuntimeException | Error e) {  // an Error too: JavaCPP's OutOfMemoryError from the host scalars above
            // every part released even where releasing one throws; e stays the failure the caller sees
            dev.gapfill.core.Closing.closeAfter(e, po, pl, ct, sc, lp, pr, gk, gv);
            if (desc != null) {
                cudnn.cudnnDestroyTensorDescriptor(desc);
            }
            for (Pointer x : new Pointer[] {a, o1, z}) {
                if (x != null) {
                    x.close();
                }
            }
            if (done != null) {
                try {
                    done.close();
                } catch (RuntimeException closeFailure) {
                    e.addSuppressed(closeFailure);
                }
            }
            throw e;
        }
        // decide() names the cluster kernel where the rule takes it; the plan names what runs
        Decision named = clusterOff != null && decision.variant().startsWith("decode_mma_c")
                ? new Decision(decision.backend(), GqaDecodeHeuristics.variant(problem, sp, st),
                        decision.reason() + "; the global split merge instead of the cluster (" + clusterOff + ")")
                : decision;
        this.decision = stageNote != null && !named.variant().equals(GqaDecodeHeuristics.variant(problem, sp, st))
                ? new Decision(named.backend(), GqaDecodeHeuristics.variant(problem, sp, st), named.reason() + "; " + stageNote)
                : named;
        this.split = sp;
        this.stages = st;
        this.fitChunks = fit;
        this.partO = po;
        this.partLse = pl;
        this.counters = ct;
        this.scores = sc;
        this.logp = lp;
        this.probs = pr;
        this.gatherK = gk;
        this.gatherV = gv;
        this.softmaxDesc = desc;
        this.alphaScores = a;
        this.one = o1;
        this.zero = z;
        this.splitFn = sf;
        this.gatherFn = gf;
        this.maskFn = maf;
        this.probsFn = pf;
        this.setupDone = done;
        this.setupStream = made;
    }

    public Problem problem() { return p; }

    public Decision decision() { return decision; }

    /** Splits of the custom kernel (1 for the vendor path and the reference). */
    public int splits() { return split.splits(); }

    /** Keys per split. */
    public int chunk() { return split.chunk(); }

    /** Warps per block of the custom kernel (4, or 8 for the D = 64 wide kernels); 4 for the vendor path. */
    public int warps() { return split.warps(); }

    /** Thread-block cluster size of the custom kernel (its splits; sm_90 cluster kernels), or 0: no cluster. */
    public int cluster() { return split.cluster(); }

    /** The softmax scale in use. */
    public double scale() { return scale; }

    /** Device bytes this plan holds. */
    public long workspaceBytes() {
        long n = 0;
        for (Tensor x : new Tensor[] {partO, partLse, counters, scores, logp, probs, gatherK, gatherV}) {
            if (x != null) {
                n += x.byteSize();
            }
        }
        return n;
    }

    /** {@link #run(Tensor, KvCache, Tensor, Tensor, Tensor, Stream)} without lse. */
    public void run(Tensor q, KvCache cache, Tensor lens, Tensor out, Stream stream) {
        run(q, cache, lens, out, null, stream);
    }

    /**
     * One decode step: {@code out[b,h] = softmax(scale·q[b,h]·K[b,h/G,:len_b]ᵀ)·V[b,h/G,:len_b]}, {@code lse[b,h]}
     * (optional) in natural-log units. Enqueued on {@code stream} (null: the per-thread stream), which must be ordered
     * after the plan's previous run; the plan orders it after the plan's making (see {@link GqaDecode#plan(Problem, Device, GqaDecode.Options, Stream)}).
     *
     * @param q     {@code [B, Hq, D]} in the plan's dtype
     * @param cache K and V in the plan's layout (capacity ≥ maxLen), plus the block table for PAGED
     * @param lens  {@code [B]} I32 on the same device
     * @param out   {@code [B, Hq, D]} in the plan's dtype
     * @param lse   {@code [B, Hq]} F32, or null
     * @throws ArgumentException before any launch when a tensor does not match the plan, or (device tensors) out or lse
     *                           overlaps an input or each other
     */
    public void run(Tensor q, KvCache cache, Tensor lens, Tensor out, Tensor lse, Stream stream) {
        if (closed) {
            throw new IllegalStateException("gqa_decode plan is closed");
        }
        validate(p, device, q, cache, lens, out, lse);
        if (device.isCpu()) {
            GqaDecodeReference.decode(q, cache, lens, out, lse, p.maxLen(), scale);
            return;
        }
        Stream s = OpStreams.pick(device, stream);
        if (setupDone != null && !s.sameStreamAs(setupStream) && !s.sameStreamAs(orderedStream)) {
            orderAfterSetup(s);
        }
        if (p.layout() == KvLayout.PAGED && Boolean.getBoolean(DEBUG_CHECK_BLOCK_TABLE)) {
            if (s.isCapturing()) {
                // its copy to the host and synchronization would invalidate the caller's graph: not checked there
                if (!CAPTURE_SKIP_LOGGED.getAndSet(true)) {
                    LOG.warn("{}: a run under graph capture is not checked (the check synchronizes)", DEBUG_CHECK_BLOCK_TABLE);
                }
            } else {
                checkBlockTableOnHost(cache, lens, s);
            }
        }
        // before the launches: work already queued orders the frees if a later one fails
        OpStreams.record(s, q, cache.k(), cache.v(), cache.blockTable(), lens, out, lse, partO, partLse, counters, scores, logp,
                probs, gatherK, gatherV);
        try {
            if (decision.backend() == Backend.CUSTOM) {
                runCustom(q, cache, lens, out, lse, s);
            } else {
                runVendor(q, cache, lens, out, lse, s);
            }
        } finally {  // the tensors stay reachable until every launch is queued: their cleaner must not free them before (recorded above)
            Reference.reachabilityFence(q);
            Reference.reachabilityFence(cache);  // holds k, v and the block table
            Reference.reachabilityFence(lens);
            Reference.reachabilityFence(out);
            Reference.reachabilityFence(lse);
            Reference.reachabilityFence(this);  // and the plan's workspace (a plan dropped while it runs)
        }
    }

    /**
     * Blocks along the keys of the vendor path's mask and probability passes (256 threads each), after checking their
     * 32-bit index: vendor_glue.cu walks {@code j < maxLen} in steps of the grid, so maxLen + blocks·256 (about 2·maxLen)
     * must stay at most 2^31-1; longer plans take the custom path up to {@link GqaDecodeHeuristics#CUSTOM_MAX_LEN}
     * ({@link Checks#gridStrideIndexable}, naming "maxLen").
     */
    static int glueColumns(int maxLen) {
        int cols = (int) (((long) maxLen + 255) / 256);
        Checks.gridStrideIndexable("maxLen", "key positions of the vendor path's mask and probability passes", maxLen, cols, 256);
        return cols;
    }

    /** Every check of {@link #run} for a plan of {@code p} on {@code device}; nothing is launched. */
    static void validate(Problem p, Device device, Tensor q, KvCache cache, Tensor lens, Tensor out, Tensor lse) {
        validateInputs(p, device, q, cache, lens);
        int b = p.batch();
        int hq = p.qHeads();
        checkHeads("out", out, p, device);
        if (lse != null) {
            Checks.open("lse", lse);
            Checks.dtype("lse", lse, DType.F32);
            Checks.shape("lse", lse, "B, Hq", b, hq);
            Checks.sameDevice("lse", lse, device);
            Checks.contiguous("lse", lse);
        }
        // device memory: the kernels read q, K, V, the lengths and the block table while other blocks write out and lse
        // (called per decode step: no arrays allocated here)
        noOverlapWithInputs("out", out, q, cache.k(), cache.v(), lens, cache.blockTable());
        noOverlapWithInputs("lse", lse, q, cache.k(), cache.v(), lens, cache.blockTable());
        Checks.noOverlap("lse", lse, "out", out);
    }

    /** q or out: open, the problem's dtype, [B, Hq, D], on the device, contiguous, 16-byte aligned (the kernels' vector loads). */
    private static void checkHeads(String name, Tensor t, Problem p, Device device) {
        Checks.open(name, t);
        Checks.dtype(name, t, p.dtype());
        Checks.shape(name, t, "B, Hq, D", p.batch(), p.qHeads(), p.headDim());
        Checks.sameDevice(name, t, device);
        Checks.contiguous(name, t);
        Checks.aligned(name, t, 16);
    }

    /** The checks of {@link #validate} on q, the cache and the lengths (what a call that allocates its output checks first). */
    static void validateInputs(Problem p, Device device, Tensor q, KvCache cache, Tensor lens) {
        int b = p.batch();
        int hkv = p.kvHeads();
        int d = p.headDim();
        checkHeads("q", q, p, device);
        if (cache == null) {
            throw new ArgumentException("cache", "a KV cache", "null");
        }
        if (cache.layout() != p.layout()) {
            throw new ArgumentException("cache", "layout " + p.layout() + " (the plan's)", String.valueOf(cache.layout()));
        }
        Tensor k = Checks.open("cache.k", cache.k());
        Tensor v = Checks.open("cache.v", cache.v());
        Checks.dtype("cache.k", k, p.dtype());
        Checks.dtype("cache.v", v, p.dtype());
        switch (p.layout()) {
            case BHLD:
                Checks.shape("cache.k", k, "B, Hkv, L, D", b, hkv, -1, d);
                if (k.dim(2) < p.maxLen()) {
                    throw new ArgumentException("cache.k", "capacity L >= maxLen=" + p.maxLen(), "L=" + k.dim(2));
                }
                break;
            case BLHD:
                Checks.shape("cache.k", k, "B, L, Hkv, D", b, -1, hkv, d);
                if (k.dim(1) < p.maxLen()) {
                    throw new ArgumentException("cache.k", "capacity L >= maxLen=" + p.maxLen(), "L=" + k.dim(1));
                }
                break;
            default:
                Checks.shape("cache.k", k, "P, pageSize, Hkv, D", -1, p.pageSize(), hkv, d);
                Tensor table = Checks.open("cache.blockTable", cache.blockTable());
                Checks.dtype("cache.blockTable", table, DType.I32);
                Checks.shape("cache.blockTable", table, "B, maxPages", b, p.maxPages());
                Checks.sameDevice("cache.blockTable", table, device);
                Checks.contiguous("cache.blockTable", table);
                break;
        }
        if (p.layout() != KvLayout.PAGED && cache.blockTable() != null) {
            throw new ArgumentException("cache.blockTable", "null for a contiguous layout", cache.blockTable().toString());
        }
        Checks.shape("cache.v", v, "", k.shape());
        for (String n : new String[] {"cache.k", "cache.v"}) {
            Tensor x = n.equals("cache.k") ? k : v;
            Checks.sameDevice(n, x, device);
            Checks.contiguous(n, x);
            Checks.aligned(n, x, 16);
        }
        Checks.open("lens", lens);
        Checks.dtype("lens", lens, DType.I32);
        Checks.shape("lens", lens, "B", b);
        Checks.sameDevice("lens", lens, device);
        Checks.contiguous("lens", lens);
    }

    private static void noOverlapWithInputs(String name, Tensor t, Tensor q, Tensor k, Tensor v, Tensor lens, Tensor table) {
        Checks.noOverlap(name, t, "q", q);
        Checks.noOverlap(name, t, "cache.k", k);
        Checks.noOverlap(name, t, "cache.v", v);
        Checks.noOverlap(name, t, "lens", lens);
        Checks.noOverlap(name, t, "cache.blockTable", table);
    }

    /**
     * Orders a run on {@code s}, not the making stream, after the plan's setup: a stream wait on the setup event, or,
     * while {@code s} is being captured (a wait on an event recorded outside the capture is not allowed there), a host
     * wait for the setup in relaxed capture mode, after which the setup is known complete for every stream.
     */
    private void orderAfterSetup(Stream s) {
        if (s.isCapturing()) {
            setupDone.synchronizeDuringCapture();
            Event e = setupDone;
            setupDone = null;
            orderedStream = null;
            e.close();
        } else {
            s.waitFor(setupDone);
            orderedStream = s;
        }
    }

    /** Debug mode: the pages each sequence reads must exist (synchronises {@code s}). */
    private void checkBlockTableOnHost(KvCache cache, Tensor lens, Stream s) {
        int b = p.batch();
        int mp = p.maxPages();
        if ((long) b * mp > Integer.MAX_VALUE - 8) {  // one host array; the cache itself is refused far below this
            throw new ArgumentException("cache.blockTable", "at most 2^31 - 9 entries for " + DEBUG_CHECK_BLOCK_TABLE, (long) b * mp + " entries");
        }
        int[] len = new int[b];
        int[] table = new int[b * mp];
        CudaDevice cd = s.cudaDevice();
        try (org.bytedeco.javacpp.IntPointer hl = new org.bytedeco.javacpp.IntPointer(b);
             org.bytedeco.javacpp.IntPointer ht = new org.bytedeco.javacpp.IntPointer((long) b * mp)) {
            cd.check(cudart.cudaMemcpyAsync(hl, new DevicePointer(lens.address()), 4L * b, cudart.cudaMemcpyDeviceToHost, s.handle()),
                    "cudaMemcpyAsync(D2H, lens)");
            cd.check(cudart.cudaMemcpyAsync(ht, new DevicePointer(cache.blockTable().address()), 4L * b * mp,
                    cudart.cudaMemcpyDeviceToHost, s.handle()), "cudaMemcpyAsync(D2H, block table)");
            s.synchronize();
            hl.get(len);
            ht.get(table);
        }
        long pages = cache.k().dim(0);
        for (int i = 0; i < b; i++) {
            int used = (Math.min(Math.max(len[i], 0), p.maxLen()) + p.pageSize() - 1) / p.pageSize();
            for (int j = 0; j < used; j++) {
                int page = table[i * mp + j];
                if (page < 0 || page >= pages) {
                    throw new ArgumentException("cache.blockTable", "page numbers in [0, " + pages + ") for the positions below each length",
                            "blockTable[" + i + ", " + j + "] = " + page);
                }
            }
        }
    }

    /** Element strides {b, h, l} of a contiguous cache (PAGED: {0, D, Hkv·D}), and the page stride. */
    private long[] strides(Tensor k) {
        long d = p.headDim();
        long hkv = p.kvHeads();
        switch (p.layout()) {
            case BHLD: return new long[] {hkv * k.dim(2) * d, k.dim(2) * d, d, 0};
            case BLHD: return new long[] {k.dim(1) * hkv * d, d, hkv * d, 0};
            default: return new long[] {0, d, hkv * d, p.pageSize() * hkv * d};
        }
    }

    /**
     * P for the kernels' clamp of block-table entries into [0, P) (every entry is an int, so at most 2^31 − 1 pages
     * matter); 1 for contiguous caches, which read no table.
     */
    private int numPages(KvCache cache) {
        return p.layout() == KvLayout.PAGED ? (int) Math.min(cache.k().dim(0), Integer.MAX_VALUE) : 1;
    }

    private int pageShift() {
        return p.layout() == KvLayout.PAGED ? Integer.numberOfTrailingZeros(p.pageSize()) : 0;
    }

    private void runCustom(Tensor q, KvCache cache, Tensor lens, Tensor out, Tensor lse, Stream s) {
        int g = p.groupSize();
        int tiles = GqaDecodeHeuristics.headTiles(g);
        long[] st = strides(cache.k());
        float scaleLog2 = (float) (scale * LOG2E);
        splitFn.launch(s, split.splits(), p.kvHeads() * tiles, p.batch(), split.threads(), 1, 1,
                GqaDecodeHeuristics.sharedBytes(p.headDim(), split.warps(), stages),
                KernelArgs.begin().ptr(q).ptr(cache.k()).ptr(cache.v()).ptr(cache.blockTable()).ptr(lens).ptr(out).ptr(lse)
                        .ptr(partO).ptr(partLse).ptr(counters).i32(p.qHeads()).i32(p.kvHeads()).i32(g).i32(tiles)
                        .i32(split.splits()).i32(split.chunk()).i32(p.maxLen()).i32(p.maxPages()).i32(pageShift())
                        .i32(numPages(cache)).i32(fitChunks[0]).i32(fitChunks[1]).i32(fitChunks[2]).i32(fitChunks[3]).i32(fitChunks[4]).i32(fitChunks[5]).i32(fitChunks[6])
                        .i64(st[0]).i64(st[1]).i64(st[2]).i64(st[3]).f32(scaleLog2));
    }

    private void runVendor(Tensor q, KvCache cache, Tensor lens, Tensor out, Tensor lse, Stream s) {
        CudaDevice cd = s.cudaDevice();
        int b = p.batch();
        int hq = p.qHeads();
        int hkv = p.kvHeads();
        int d = p.headDim();
        int g = p.groupSize();
        int len = p.maxLen();
        int dt = p.dtype() == DType.F16 ? cudart.CUDA_R_16F : cudart.CUDA_R_16BF;
        long kAddr = cache.k().address();
        long vAddr = cache.v().address();
        long[] st = strides(cache.k());
        if (p.layout() == KvLayout.PAGED) {
            int blocks = (int) (((long) len * d / 8 + 255) / 256);
            for (Tensor[] io : new Tensor[][] {{cache.k(), gatherK}, {cache.v(), gatherV}}) {
                gatherFn.launch(s, blocks, hkv, b, 256, 1, 1, 0, KernelArgs.begin().ptr(io[0]).ptr(cache.blockTable()).ptr(lens)
                        .ptr(io[1]).i32(hkv).i32(d).i32(len).i32(p.maxPages()).i32(pageShift()).i32(numPages(cache)));
            }
            kAddr = gatherK.address();
            vAddr = gatherV.address();
            st = new long[] {(long) hkv * len * d, (long) len * d, d, 0};
        }
        cublasContext h = VendorHandles.cublas(s);
        InitcheckAid.beforeVendorWrite(scores, s);
        InitcheckAid.beforeVendorWrite(out, s);
        // cuDNN's softmax writes logp; when initcheck instruments Gapfill's kernels only, those stores go unseen and the
        // probs kernel's reads of logp are reported as uninitialised
        InitcheckAid.beforeVendorWrite(logp, s);
        long scoresAddr = scores.address();
        long probsAddr = probs.address();
        long qAddr = q.address();
        long oAddr = out.address();
        int eb = p.dtype().bytes();
        // scores[b, kvh·G + i, j] = scale · q[b, kvh·G + i] · K[b, kvh, j]; per (b, kvh) column-major C = Kᵀ(op T)·qᵀ:
        // m = maxLen, n = G, k = D. BHLD/gathered: one batch over B·Hkv; BLHD: batch over the smaller of B and Hkv.
        if (p.layout() != KvLayout.BLHD) {
            gemm(cd, h, cublas.CUBLAS_OP_T, len, g, d, alphaScores, kAddr, dt, (int) st[2], st[1], qAddr, dt, d, (long) g * d,
                    scoresAddr, cudart.CUDA_R_32F, len, (long) g * len, b * hkv, "scores");
        } else if (b <= hkv) {
            for (int i = 0; i < b; i++) {
                gemm(cd, h, cublas.CUBLAS_OP_T, len, g, d, alphaScores, kAddr + i * st[0] * eb, dt, (int) st[2], st[1],
                        qAddr + (long) i * hq * d * eb, dt, d, (long) g * d, scoresAddr + (long) i * hq * len * 4, cudart.CUDA_R_32F,
                        len, (long) g * len, hkv, "scores");
            }
        } else {
            for (int j = 0; j < hkv; j++) {
                gemm(cd, h, cublas.CUBLAS_OP_T, len, g, d, alphaScores, kAddr + j * st[1] * eb, dt, (int) st[2], st[0],
                        qAddr + (long) j * g * d * eb, dt, d, (long) hq * d, scoresAddr + (long) j * g * len * 4, cudart.CUDA_R_32F,
                        len, (long) hq * len, b, "scores");
            }
        }
        int cols = glueColumns(len);
        maskFn.launch(s, cols, b * hq, 1, 256, 1, 1, 0, KernelArgs.begin().ptr(scores).ptr(lens).i32(hq).i32(len));
        VendorHandles.checkDnn(cd, cudnn.cudnnSoftmaxForward(VendorHandles.cudnn(s), cudnn.CUDNN_SOFTMAX_LOG,
                cudnn.CUDNN_SOFTMAX_MODE_CHANNEL, one, softmaxDesc, new DevicePointer(scoresAddr), zero, softmaxDesc,
                new DevicePointer(logp.address())), "cudnnSoftmaxForward(LOG, CHANNEL)");
        probsFn.launch(s, cols, b * hq, 1, 256, 1, 1, 0,
                KernelArgs.begin().ptr(logp).ptr(scores).ptr(lens).ptr(probs).ptr(lse).i32(hq).i32(len));
        // out[b, kvh·G + i] = Σ_j P[b, kvh·G + i, j] · V[b, kvh, j]; column-major Oᵀ (D × G) = Vᵀ (D × maxLen) · Pᵀ.
        if (p.layout() != KvLayout.BLHD) {
            gemm(cd, h, cublas.CUBLAS_OP_N, d, g, len, one, vAddr, dt, (int) st[2], st[1], probsAddr, dt, len, (long) g * len,
                    oAddr, dt, d, (long) g * d, b * hkv, "out");
        } else if (b <= hkv) {
            for (int i = 0; i < b; i++) {
                gemm(cd, h, cublas.CUBLAS_OP_N, d, g, len, one, vAddr + i * st[0] * eb, dt, (int) st[2], st[1],
                        probsAddr + (long) i * hq * len * eb, dt, len, (long) g * len, oAddr + (long) i * hq * d * eb, dt, d,
                        (long) g * d, hkv, "out");
            }
        } else {
            for (int j = 0; j < hkv; j++) {
                gemm(cd, h, cublas.CUBLAS_OP_N, d, g, len, one, vAddr + j * st[1] * eb, dt, (int) st[2], st[0],
                        probsAddr + (long) j * g * len * eb, dt, len, (long) hq * len, oAddr + (long) j * g * d * eb, dt, d,
                        (long) hq * d, b, "out");
            }
        }
    }

    /** One cublasGemmStridedBatchedEx with B non-transposed, fp32 compute (tensor cores for F16/BF16 inputs). */
    private void gemm(CudaDevice cd, cublasContext h, int opA, int m, int n, int k, FloatPointer alpha, long a, int aType, int lda,
                      long strideA, long bPtr, int bType, int ldb, long strideB, long c, int cType, int ldc, long strideC, int batch,
                      String what) {
        int rc = cublas.cublasGemmStridedBatchedEx(h, opA, cublas.CUBLAS_OP_N, m, n, k, alpha, new DevicePointer(a),
                aType, lda, strideA, new DevicePointer(bPtr), bType, ldb, strideB, zero, new DevicePointer(c), cType, ldc, strideC, batch,
                cublas.CUBLAS_COMPUTE_32F, cublas.CUBLAS_GEMM_DEFAULT);
        if (rc != 0) {  // the message is built only on failure
            VendorHandles.checkBlas(cd, rc, "cublasGemmStridedBatchedEx(" + what + ", m=" + m + " n=" + n + " k=" + k + " batch="
                    + batch + ")");
        }
    }

    /**
     * Frees the workspace (stream-ordered after the last run) and the descriptors; every part is freed even where
     * freeing another failed (the first failure is thrown after). Closing twice throws.
     */
    @Override public void close() {
        if (closed) {
            throw new IllegalStateException("gqa_decode plan closed twice");
        }
        closed = true;
        Cleanup cleanup = new Cleanup();
        for (Tensor x : new Tensor[] {partO, partLse, counters, scores, logp, probs, gatherK, gatherV}) {
            cleanup.close(x);
        }
        if (softmaxDesc != null) {
            cleanup.run(() -> cudnn.cudnnDestroyTensorDescriptor(softmaxDesc));
        }
        for (Pointer x : new Pointer[] {alphaScores, one, zero}) {
            cleanup.close(x);
        }
        cleanup.close(setupDone);  // null where none was recorded or the setup is known complete
        setupDone = null;
        cleanup.rethrow();
    }

    public boolean isClosed() { return closed; }

    @Override public String toString() {
        return "GqaDecodePlan(" + p + ", " + decision + ", splits " + split.splits() + "×" + split.chunk() + ", " + split.warps() + " warps" + (split.cluster() > 0 ? ", cluster " + split.cluster() : "") + ")";
    }
}
