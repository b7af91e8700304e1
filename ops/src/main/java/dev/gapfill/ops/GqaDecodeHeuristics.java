package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.UnsupportedShapeException;

/**
 * Dispatch for {@link GqaDecode}: which backend runs a shape, and how the custom kernel splits the KV range.
 *
 * <p>Thresholds come from the standalone harness run on an H100 80GB HBM3 SXM (132 SMs, copy 3031 GB/s) with the
 * kernel file {@code cuda-native/src/main/cuda/gqa_decode/decode_mma.cu} of commit a03b977, output
 * {@code cuda-native/dev/gqa_decode/h100-decode_mma.txt} (rows cited below as "harness"); the vendor side there is
 * cuBLAS GEMM → fused mask+softmax kernel → cuBLAS GEMM (a little faster than the Java vendor path, which runs the
 * mask, cuDNN log-softmax and the exp as three passes). Checked since against the Java sweep ({@code
 * docs/benchmarks/h100/gqa_decode.json}: AUTO within 5 % of the faster path on all 1080 rows at eff73a2).
 */
public final class GqaDecodeHeuristics {
    /** Threads per block of the custom kernel (decode_mma.cu kThreads: 4 warps). */
    public static final int THREADS = 128;
    /** Warps per block of the D = 64 wide kernels ({@code gqa_decode_mma_w8_*_d64}). */
    public static final int WIDE_WARPS = 8;
    /**
     * D = 64: the wide kernels take half the 4-warp plan's splits only where its chunk is at most this many keys, and
     * the same splits above it ({@link #splits}). Sweep at e240d80 (16/2 d64, halved everywhere): chunks of 64–128
     * keys halved ran 0.83–1.01x the 4-warp time, chunks of 2048 keys with lengths in [L/2, L] 1.09–1.20x, of 8192
     * keys 1.13–1.25x.
     */
    public static final int WIDE_HALVE_MAX_CHUNK = 256;
    /**
     * D = 64: above this 4-warp chunk the plan keeps 4-warp blocks. Sweep at ba6fb7a (8 warps at the 4-warp count above
     * {@link #WIDE_HALVE_MAX_CHUNK}): chunks of 512 and 2048 keys 0.91–1.01x the 4-warp time of 6ecf27e, chunks of 8192
     * keys (B=4 L=131072, B=16 L=32768) 1.00–1.05x (1.02x in geometric mean).
     */
    public static final int WIDE_MAX_CHUNK = 4096;
    /** Query heads per block (the mma M dimension): G > 16 uses ceil(G/16) head tiles. */
    public static final int HEAD_TILE = 16;
    /** Keys per split are a multiple of this (4 warps × 16-key tiles). */
    public static final int CHUNK_ALIGN = 64;
    /** Most splits (decode_mma.cu kMaxSplits: the merge keeps one weight per split in shared memory). */
    public static final int MAX_SPLITS = 256;
    /** Levels of {@link #fittedChunks} (decode_mma.cu kFitLevels): longest lengths down to maxLen / 128. */
    public static final int FIT_LEVELS = 7;
    /**
     * Per-block overhead of the split cost model, in keys: the q tile, the warp merge, the partial write and the
     * split merge. Harness split sweep (f16 BHLD d128): B=1 32/8 L=8192 s16 = 20.2 µs vs s32 = 21.6, s12 = 20.4;
     * L=32768 s16 = 52.9 vs s32 = 54.8; B=4 L=4096 s4 = 30.1 vs s8 = 30.7; B=8 L=4096 s2 = 51.5 vs s4 = 52.9;
     * B=16 L=8192 s1 = 178.6 vs s2 = 183.1; 16/2 d64 B=4 L=8192 s16 = 15.2 vs s12 = 16.2, s32 = 16.4. The rule
     * picks the fastest measured count on each of these rows.
     */
    public static final int BLOCK_OVERHEAD_KEYS = 128;
    /** Grid y and z limit. */
    private static final int GRID_YZ = 65535;

    private GqaDecodeHeuristics() {}

    /** Head tiles per KV head: ceil(G / 16). Each tile reads its KV range once (tiles after the first mostly from L2). */
    public static int headTiles(int g) {
        return (g + HEAD_TILE - 1) / HEAD_TILE;
    }

    /** The ring depth of decode_mma.cu's {@code gqa_decode_mma_s2_*_d128} entries ({@link #stages(int, DeviceInfo)}). */
    public static final int TWO_STAGES = 2;

    /** Stages of each warp's cp.async ring (decode_mma.cu default_stages): 4 for D=64, 3 for D=128, 2 for D=256. */
    public static int stages(int headDim) {
        return headDim == 64 ? 4 : headDim == 128 ? 3 : 2;
    }

    /**
     * Dynamic shared memory of one block (decode_mma.cu Cfg::SMEM): the q tile [16, D] plus, per warp, the ring of
     * 16-key K and V tiles. D=64: 67 584 B, D=128: 102 400 B, D=256: 139 264 B (needs the opt-in limit of sm_80+).
     */
    public static int sharedBytes(int headDim) {
        return sharedBytes(headDim, THREADS / 32);
    }

    /** As {@link #sharedBytes(int)} for a block of {@code warps} warps (decode_mma.cu Cfg&lt;D, stages, WARPS&gt;::SMEM). */
    public static int sharedBytes(int headDim, int warps) {
        return sharedBytes(headDim, warps, stages(headDim));
    }

    /** As {@link #sharedBytes(int, int)} with rings of {@code stages} stages. */
    public static int sharedBytes(int headDim, int warps, int stages) {
        return HEAD_TILE * headDim * 2 + warps * stages * 2 * 16 * headDim * 2;
    }

    /**
     * Stages of the 4-warp rings on {@code info}'s device: {@link #stages(int)}, except at D = 128 where the 3-stage block
     * (102 400 B) does not fit the device's opt-in shared memory per block (99 KiB, 101 376 B, on sm_86 and sm_89: A10,
     * A40, RTX 30 and 40, L4, L40S) but the 2-stage one (69 632 B; decode_mma.cu's {@code gqa_decode_mma_s2_*_d128}
     * entries) does. An unknown limit (0) keeps the default.
     */
    public static int stages(int headDim, DeviceInfo info) {
        int st = stages(headDim);
        long optin = info.smemPerBlockOptin();
        if (headDim == 128 && optin > 0 && sharedBytes(128, THREADS / 32, st) > optin
                && sharedBytes(128, THREADS / 32, TWO_STAGES) <= optin) {
            return TWO_STAGES;
        }
        return st;
    }

    /**
     * How the custom kernel splits each (sequence, KV head, head tile) range, and with how many warps per block.
     *
     * @param splits blocks per (sequence, KV head, head tile); 1 writes o directly, more merge in the last block
     * @param chunk  keys per split (a multiple of {@link #CHUNK_ALIGN}); split s covers [s·chunk, (s+1)·chunk)
     * @param warps  warps per block: 4, or {@link #WIDE_WARPS} for the D = 64 wide kernels
     * @param cluster 0, or the thread-block cluster size ({@code splits}) of the sm_90 cluster kernels
     *                ({@code gqa_decode_mma_c<n>_*}, {@link #withCluster}): the splits merge in distributed shared memory
     */
    public record Split(int splits, int chunk, int warps, int cluster) {
        /** A split of 4-warp blocks without a cluster. */
        public Split(int splits, int chunk) {
            this(splits, chunk, THREADS / 32, 0);
        }

        /** A split without a cluster. */
        public Split(int splits, int chunk, int warps) {
            this(splits, chunk, warps, 0);
        }

        /** The kernel symbol's infix after {@code gqa_decode_mma_}: {@code "w8_"}, {@code "c<n>_"} or empty. */
        public String kernelInfix() {
            return cluster > 0 ? "c" + cluster + "_" : warps == WIDE_WARPS ? "w8_" : "";
        }

        /** Threads per block. */
        public int threads() {
            return 32 * warps;
        }
    }

    /**
     * Split count: the s ≤ {@link #MAX_SPLITS} minimising ceil(ctas·s / SMs) · (chunk(s) + {@link #BLOCK_OVERHEAD_KEYS}),
     * ctas = B·Hkv·headTiles and chunk(s) = ceil(maxLen/s) rounded up to {@link #CHUNK_ALIGN}: the keys the busiest SM
     * walks plus a per-block overhead. The SM, not the block, is the unit because the blocks on one SM share its
     * bandwidth (harness: splitting B=1 32/8 L=8192 into 32 blocks per KV head, two per SM, measured 21.6 µs against
     * 20.2 for 16). Worked examples on 132 SMs: B=1 Hkv=8 L=8192: s=16 (chunk 512, 128 blocks); B=8 Hkv=8 L=4096: s=2;
     * B=16 Hkv=8 L=8192: s=1.
     *
     * <p>At D = 64, where that count is 2 or more, its chunk at most {@link #WIDE_MAX_CHUNK} keys and the device's
     * opt-in shared memory known to fit the block ({@link #sharedBytes(int, int)}: 130 KiB), the plan takes
     * {@link #WIDE_WARPS}-warp blocks. Where the 4-warp chunk is at most {@link #WIDE_HALVE_MAX_CHUNK}
     * keys they get half the splits (rounded, at least 1): the same warps in flight per SM, and half the partials
     * through the global ticket and the last block's merge. Fixed-cost harness on the H100
     * (cuda-native/dev/gqa_decode/fixedcost/h100-a795d45.txt, 16/2 d64 × B ∈ {1, 4, 16} × L ∈ {512, 2048, 8192} ×
     * BHLD, paged16, lengths = L): 0.84–1.00× the time of the 4-warp kernel with the same acq_rel ticket (S2, as
     * shipped since 3e2769d) at the plan's count (B=1 L=2048 BHLD 9.06 against 10.11 µs). Above that chunk they keep
     * the 4-warp plan's splits: halved there, the sweep at e240d80 lost up to 1.25× where the lengths vary in [L/2, L]
     * (B=16 L=32768: fewer blocks, and with short sequences some of them idle, so fewer SMs pull the keys), while the
     * harness measured 8 warps at the same count at 0.96–1.00× the time of S2 (B=4 L=8192 16.06 against 16.67 µs;
     * B=16 L=8192 37.73 against 38.37; paged16 39.94 against 39.78). At D = 128 the halved form lost on the smallest
     * rows (B=1 L=512 32/8: 9.95 against 9.34 µs), so it stays with 4 warps there.
     */
    public static Split splits(GqaDecode.Problem p, DeviceInfo info) {
        Split one = oneSplit(p, info);
        return one != null ? one : splits(p, p.maxLen(), info);
    }

    /** {@link #oneSplit}: at most this maxLen (keys); 2048 at a46983e, whose sweep lost with lengths in [L/2, L]. */
    public static final int ONE_SPLIT_MAX_LEN = 512;
    /** {@link #oneSplit}: units (B·Hkv·headTiles) of at least this many twentieths of the SMs (0.45). */
    public static final int ONE_SPLIT_MIN_UNITS_TWENTIETHS = 9;

    /**
     * One split per (sequence, KV head, head tile), where the cost model splits but one split already puts a block on
     * nearly half the SMs or more (units = B·Hkv·headTiles ≥ 0.45 · SMs) and maxLen is at most
     * {@link #ONE_SPLIT_MAX_LEN}: the split merge (partials, ticket, the last block's reads) costs more there than
     * the halved chunk saves. 8-warp blocks at D = 64 where the device's opt-in shared memory holds them, else 4. Null
     * where the rule does not apply (the plan is {@link #splits(GqaDecode.Problem, int, DeviceInfo)}'s). Only the plan's
     * own count: the fitted chunks of shorter launches ({@link #fittedChunks}) keep their levels.
     *
     * <p>GqaDecodeSplitProbe on one H100, F16 BHLD, lengths = L, thirty-fifth session
     * ({@code docs/benchmark-runs/h100/gqa-split-probe-0cf12a4.txt} and {@code gqa-split-probe-ceadc4e-batch.txt}), 64
     * units (0.48 of 132 SMs), the plan's 2 splits against 1: L=512 28/4 d128 B=16 14.7 against 12.3 µs, 32/8 B=8
     * 13.2 / 12.0; L=2048 28/4 B=16 30.9 / 29.8, 64/8 B=8 30.9 / 29.9, 32/8 B=8 29.6 / 29.5, 16/2 d64 B=32 (8 warps)
     * 19.4 / 17.9. At L=8192 two splits won at D = 128 (28/4 B=16 94.8 against 98.1, 32/8 B=8 93.3 / 97.1); at 48
     * units (0.36 of the SMs) too (16/2 d64 B=24 L=2048 17.0 against 17.3, 28/4 B=12 25.9 / 27.4), hence the units
     * bound. The sweep with the rule up to maxLen 2048 (a46983e, docs/benchmark-runs/h100/gqa_decode-a46983e.json)
     * changed the 24 rows of 28/4 B=16 at L = 512 and 2048: at L = 512 0.83–0.89× their time at 804447e, lengths = L and
     * lengths drawn in [L/2, L] alike; at L = 2048 0.95–0.97× with lengths = L but 1.08–1.12× with lengths in
     * [L/2, L] (one block per sequence walks its whole length, so the longest sequences set the time while the
     * shorter ones leave SMs idle), and those six rows fell below 60 % of the floor. Hence maxLen ≤ 512.
     */
    static Split oneSplit(GqaDecode.Problem p, DeviceInfo info) {
        long units = (long) p.batch() * p.kvHeads() * headTiles(p.groupSize());
        if (p.maxLen() > ONE_SPLIT_MAX_LEN || units * 20 < (long) ONE_SPLIT_MIN_UNITS_TWENTIETHS * Math.max(1, info.smCount())) {
            return null;
        }
        if (narrowSplits(p, p.maxLen(), info).splits() < 2) {
            return null;  // the model's own plan: unchanged
        }
        boolean wide = p.headDim() == 64 && info.smemPerBlockOptin() > 0 && sharedBytes(64, WIDE_WARPS) <= info.smemPerBlockOptin();
        return new Split(1, chunkFor(p.maxLen(), 1), wide ? WIDE_WARPS : THREADS / 32);
    }

    /** {@link #splits} of {@code p} as if its maxLen were {@code maxLen}. */
    static Split splits(GqaDecode.Problem p, int maxLen, DeviceInfo info) {
        Split base = narrowSplits(p, maxLen, info);
        if (p.headDim() != 64 || base.splits() < 2 || base.chunk() > WIDE_MAX_CHUNK
                || sharedBytes(64, WIDE_WARPS) > info.smemPerBlockOptin()) {
            return mergeCapped(p, base, maxLen);  // an unknown opt-in limit (0) keeps the 4-warp kernel too
        }
        // 8-warp plans are never capped (mergeCapped): they leave here as they are
        if (base.chunk() > WIDE_HALVE_MAX_CHUNK) {
            return new Split(base.splits(), base.chunk(), WIDE_WARPS);
        }
        int chunk = chunkFor(maxLen, (base.splits() + 1) / 2);
        return new Split((maxLen + chunk - 1) / chunk, chunk, WIDE_WARPS);
    }

    /** Cluster sizes of the sm_90 cluster kernels (decode_mma.cu GQA_MMA_CLUSTER_ALL), largest first. */
    static final int[] CLUSTER_SIZES = {8, 4, 2};
    /** A cluster plan's chunk is at most this many keys ({@link #withCluster}). */
    public static final int CLUSTER_MAX_CHUNK = 512;

    /**
     * The plan with its splits merged inside a thread-block cluster where that measured faster, else {@code plan}.
     * The cluster kernels (sm_90: compute capability 9.0, whose sm_90a code the fatbin holds) launch each (sequence, KV
     * head, head tile) as one cluster of n ∈ {8, 4, 2} 4-warp blocks; the blocks leave their partials in shared memory
     * and merge them through distributed shared memory after a cluster barrier, instead of writing them to the
     * workspace, taking the global ticket and having the last block read them back. Rule: the plan has 2 or more
     * splits; n is the largest size with n ≤ the plan's splits, at most half a block per SM in all
     * (B·Hkv·headTiles·n ≤ SMs / 2) and ceil(maxLen / n) rounded up to {@link #CHUNK_ALIGN} at most
     * {@link #CLUSTER_MAX_CHUNK} keys (and exactly n splits of it). Measured on an H100
     * ({@code cuda-native/dev/gqa_decode/cluster/h100-76c01f6-cluster-ab.txt}: 90 F16 shapes, heads 32/8, 64/8, 28/4, 32/32
     * d128 and 16/2 d64, B ∈ {1, 4, 16}, L ∈ {512, 2048, 8192}, BHLD and pages of 16): on the 31 shapes the rule
     * changes, 0.86–0.98× the time of the plan's launch (28/4 B=1 L=512: 8.80 against 10.18 µs; 16/2 d64 B=1 L=512,
     * 4 blocks of 4 warps for the plan's 4 of 8: 7.62 against 8.80), at the same splits 0.86–0.97×. Where more blocks
     * than that run, clusters lost: 32/8 B=4 L=512 at 4 splits (128 blocks) took 11.65 against 11.01 µs and at 8
     * (256 blocks) 15.94 against 11.81 (a cluster's blocks go to the SMs of one GPC, so with two blocks per SM they
     * crowd fewer SMs than the free launch); larger chunks (fewer splits for the same keys) lost by up to 1.28×.
     */
    public static Split withCluster(GqaDecode.Problem p, Split plan, DeviceInfo info) {
        if (info.cc() != 90 || plan.splits() < 2 || plan.cluster() > 0) {
            return plan;
        }
        long units = (long) p.batch() * p.kvHeads() * headTiles(p.groupSize());
        for (int n : CLUSTER_SIZES) {
            if (n > plan.splits() || units * n > info.smCount() / 2) {
                continue;
            }
            int chunk = chunkFor(p.maxLen(), n);
            if (chunk <= CLUSTER_MAX_CHUNK && (p.maxLen() + chunk - 1) / chunk == n) {
                return new Split(n, chunk, THREADS / 32, n);
            }
        }
        return plan;
    }

    /**
     * Whether a cluster plan's {@code clusters} (B·Hkv·headTiles) fit the device at once, given how many of its clusters
     * the device holds ({@code cuOccupancyMaxActiveClusters}); where not, the plan keeps the global merge
     * ({@code GqaDecodePlan}). On a whole H100 the rule's plans need at most 33 clusters of 2 and 8 of 8.
     */
    public static boolean clustersFit(long clusters, int maxActiveClusters) {
        return maxActiveClusters >= 1 && clusters <= maxActiveClusters;
    }

    /** Splits a 4-warp plan keeps at most ({@link #mergeCapped}). */
    public static final int MERGE_CAP = 16;
    /** The cap applies only where the capped chunk is at most this many keys. */
    public static final int MERGE_CAP_MAX_CHUNK = 1024;
    /** Blocks a capped plan keeps at least (the cap rises to ceil(this / (B·Hkv·tiles))). */
    public static final int MERGE_CAP_MIN_BLOCKS = 64;

    /**
     * The cost model fills the last wave, so with few (sequence, KV head, head tile) units it splits each into as many
     * blocks as one wave holds, and one block per unit merges all their partials. GqaDecodeSplitProbe on the H100
     * (docs/benchmark-runs/h100/gqa-split-probe-3cfba01.txt, lengths = L): B=1 28/4 d128 took 32 splits where 16 were
     * faster (L=2048 12.8 against 11.6 µs, 8192 16.9 / 16.1, 16384 22.2 / 21.9; at 65536, 4096-key chunks, 32 won:
     * 54.2 against 55.7). So a 4-warp plan keeps at most {@link #MERGE_CAP} splits where that chunk is at most
     * {@link #MERGE_CAP_MAX_CHUNK} keys, but never fewer than {@link #MERGE_CAP_MIN_BLOCKS} blocks (64 blocks were the
     * faster count there; 32/8 at B=1, 8 units, keeps the model's 16 splits and 128 blocks). In the sweep at 314e836 the
     * 24 rows it changed (28/4 B=1 L=2048 and 8192, every layout and length form) took 0.92-0.99x the time of 715fd08.
     * 8-warp plans are not capped: 32 splits where the model takes 64 (B=1 16/2 d64) won with lengths = L (0.92-0.97x at
     * L=32768 and 131072) but lost with lengths in [L/2, L] (up to 1.04x at 32768 and 1.15-1.17x at 131072: with fewer,
     * longer splits the shorter sequences leave more SMs idle), the same sweep.
     */
    static Split mergeCapped(GqaDecode.Problem p, Split s, int maxLen) {
        if (s.warps() != THREADS / 32) {
            return s;
        }
        long units = (long) p.batch() * p.kvHeads() * headTiles(p.groupSize());
        int cap = (int) Math.max(MERGE_CAP, (MERGE_CAP_MIN_BLOCKS + units - 1) / units);
        if (s.splits() <= cap) {
            return s;
        }
        int chunk = chunkFor(maxLen, cap);
        if (chunk > MERGE_CAP_MAX_CHUNK) {
            return s;
        }
        return new Split((maxLen + chunk - 1) / chunk, chunk, s.warps());
    }

    /** The split count of 4-warp blocks (the cost model above); {@link #splits} starts from it. */
    public static Split narrowSplits(GqaDecode.Problem p, DeviceInfo info) {
        return narrowSplits(p, p.maxLen(), info);
    }

    private static Split narrowSplits(GqaDecode.Problem p, int maxLen, DeviceInfo info) {
        long ctas = (long) p.batch() * p.kvHeads() * headTiles(p.groupSize());
        int sms = Math.max(1, info.smCount());
        int smax = Math.min(MAX_SPLITS, Math.max(1, (maxLen + CHUNK_ALIGN - 1) / CHUNK_ALIGN));
        int best = 1;
        double bestCost = Double.MAX_VALUE;
        for (int s = 1; s <= smax; s++) {
            int chunk = chunkFor(maxLen, s);
            if ((maxLen + chunk - 1) / chunk != s) {
                continue;  // the rounded chunk gives fewer splits: counted at that s
            }
            double perSm = (double) ((ctas * s + sms - 1) / sms);
            double cost = perSm * (chunk + BLOCK_OVERHEAD_KEYS);
            if (cost < bestCost * 0.999) {
                bestCost = cost;
                best = s;
            }
        }
        return new Split(best, chunkFor(maxLen, best));
    }

    /**
     * The chunks a launch of {@code plan}'s blocks takes when its longest length is short (decode_mma.cu): entry k
     * serves a longest length of at most maxLen / 2^(k+1), and is the chunk of the split this class gives a plan of that
     * maxLen with the plan's warps ({@link #splits} for 8-warp plans, {@link #narrowSplits} for 4), at least what covers
     * that length with the plan's splits and at most the plan's chunk; 0 where the length is below {@link #CHUNK_ALIGN}
     * or the plan has one split. A plan made once for the longest context then runs a step of short sequences as a plan
     * made for them would (GqaDecodeLengthProbe on the H100, docs/ops/gqa_decode.md), while a step with a sequence longer
     * than maxLen / 2 keeps the plan's chunk, which gives every block equal work.
     */
    public static int[] fittedChunks(GqaDecode.Problem p, Split plan, DeviceInfo info) {
        int[] fit = new int[FIT_LEVELS];
        if (plan.splits() < 2) {
            return fit;
        }
        for (int k = 0; k < FIT_LEVELS; k++) {
            int len = p.maxLen() >> (k + 1);
            if (len < CHUNK_ALIGN) {
                break;
            }
            Split level = plan.warps() == WIDE_WARPS ? splits(p, len, info) : mergeCapped(p, narrowSplits(p, len, info), len);
            fit[k] = Math.min(plan.chunk(), Math.max(level.chunk(), chunkFor(len, plan.splits())));
        }
        return fit;
    }

    /**
     * A split of about {@code splits} blocks per (sequence, KV head, head tile) and {@code warps} warps, whatever the
     * cost model says (split sweeps; {@link GqaDecodePlan#DEBUG_SPLITS}): chunk ceil(maxLen / splits) rounded up to
     * {@link #CHUNK_ALIGN}, and the count that chunk needs.
     *
     * @throws UnsupportedShapeException for 8 warps where the wide kernel does not run (D other than 64, or the device's
     *                                   opt-in shared memory too small), or warps other than 4 and 8
     */
    public static Split forcedSplit(GqaDecode.Problem p, int splits, int warps, DeviceInfo info) {
        if (warps != THREADS / 32 && warps != WIDE_WARPS) {
            throw new UnsupportedShapeException(GqaDecodePlan.DEBUG_WARPS, "4, or 8 at D = 64", Integer.toString(warps));
        }
        if (warps == WIDE_WARPS && (p.headDim() != 64 || sharedBytes(64, WIDE_WARPS) > info.smemPerBlockOptin())) {
            throw new UnsupportedShapeException(GqaDecodePlan.DEBUG_WARPS, "8 only at D = 64 with 130 KiB of opt-in shared memory",
                    "8 at D = " + p.headDim() + ", opt-in " + info.smemPerBlockOptin() + " B");
        }
        int s = Math.max(1, Math.min(Math.min(splits, MAX_SPLITS), (p.maxLen() + CHUNK_ALIGN - 1) / CHUNK_ALIGN));
        int chunk = chunkFor(p.maxLen(), s);
        return new Split((p.maxLen() + chunk - 1) / chunk, chunk, warps);
    }

    private static int chunkFor(int maxLen, int s) {
        int chunk = (maxLen + s - 1) / s;
        return (chunk + CHUNK_ALIGN - 1) / CHUNK_ALIGN * CHUNK_ALIGN;
    }

    /** Null if the custom kernel covers {@code p} on {@code info}'s device, else why not. */
    public static String customUnsupported(GqaDecode.Problem p, DeviceInfo info) {
        String why = customUnsupported(p);
        int smem = sharedBytes(p.headDim(), THREADS / 32, stages(p.headDim(), info));
        if (why == null && info.smemPerBlockOptin() > 0 && smem > info.smemPerBlockOptin()) {
            why = smem + " B of shared memory per block (device allows " + info.smemPerBlockOptin() + ")";
        }
        return why;
    }

    /**
     * The longest maxLen the custom kernels take: the split plan and the kernel's key loop add a chunk (up to maxLen)
     * to a key position in 32 bits ({@code (len + chunk - 1) / chunk}), which must not pass 2^31-1. Above it (and up to
     * the vendor path's own limit, which is lower) no backend covers the problem, so it is refused before any launch.
     */
    public static final int CUSTOM_MAX_LEN = 1 << 30;

    /** Null if the custom kernels cover {@code p} on some supported GPU, else why not. */
    public static String customUnsupported(GqaDecode.Problem p) {
        int d = p.headDim();
        if (d != 64 && d != 128 && d != 256) {
            return "headDim in {64, 128, 256}, got " + d;
        }
        if (p.maxLen() > CUSTOM_MAX_LEN) {
            return "maxLen <= 2^30 (32-bit key positions of the split plan), got " + p.maxLen();
        }
        if (p.batch() > GRID_YZ) {
            return "batch <= " + GRID_YZ + ", got " + p.batch();
        }
        if ((long) p.kvHeads() * headTiles(p.groupSize()) > GRID_YZ) {
            return "kvHeads·ceil(G/16) <= " + GRID_YZ;
        }
        if ((long) p.batch() * p.qHeads() * p.headDim() > Integer.MAX_VALUE) {
            return "B·Hq·D < 2^31";
        }
        return null;
    }

    /** Null if the vendor composition covers {@code p}, else why not. */
    public static String vendorUnsupported(GqaDecode.Problem p, DeviceInfo info) {
        if (info.cudnnVersion() < 0) {
            return "cuDNN is not loadable";
        }
        if ((long) p.batch() * p.qHeads() * p.maxLen() > Integer.MAX_VALUE) {
            return "B·Hq·maxLen < 2^31 (score matrix)";
        }
        if ((long) p.batch() * p.qHeads() > GRID_YZ || p.batch() > GRID_YZ || p.kvHeads() > GRID_YZ) {
            return "B·Hq <= " + GRID_YZ;
        }
        if (p.maxLen() > VENDOR_MAX_LEN) {  // the plan's glueColumns refuses it: decide must not name the vendor
            return "maxLen <= " + VENDOR_MAX_LEN + " (the mask and probability passes' 32-bit grid-stride indexing)";
        }
        return null;
    }

    /**
     * The longest maxLen the vendor composition's mask and probability passes index (GqaDecodePlan.glueColumns: maxLen
     * plus a grid of ceil(maxLen/256)·256 threads within 2^31 − 1): 2^30 − 1.
     */
    static final int VENDOR_MAX_LEN = (1 << 30) - 1;

    /**
     * The backend for {@code p}. AUTO picks CUSTOM wherever it covers the shape: in the harness it was faster than the
     * cuBLAS composition on all 288 rows (f16: B ∈ {1, 4, 8, 16, 64} × L ∈ {512 … 32768} and B=1 L=131072 × heads
     * 32/8, 64/8, 32/32, 28/4 d128 and 16/2 d64 × BHLD and paged16, plus bf16 32/8 d128 B ≤ 8 L ≥ 4096), from 1.07×
     * (32/32 d128 B=64 L=2048, where both run near the bandwidth floor) to 14× (16/2 d64 B=1 L=131072); the closest
     * contiguous 32/8 row is B=64 L=4096 (1.20×), the closest paged row 28/4 B=1 L=512 (1.79×: the vendor path gathers
     * the cache first). Where one backend does not cover the shape AUTO takes the other.
     */
    public static Decision decide(GqaDecode.Problem p, DeviceInfo info, Backend requested) {
        if (p == null) {
            throw new ArgumentException("problem", "a gqa_decode problem", "null");
        }
        if (info == null) {
            throw new ArgumentException("info", "the device's description", "null");
        }
        if (requested == null || requested == Backend.REFERENCE) {  // null threw a NullPointerException, REFERENCE was read as AUTO
            throw new ArgumentException("backend", "AUTO, VENDOR or CUSTOM for tensors on a GPU (CPU tensors always run the reference)",
                    String.valueOf(requested));
        }
        String noCustom = customUnsupported(p, info);
        String noVendor = vendorUnsupported(p, info);
        // the split plan only for a problem the custom kernels cover (its 32-bit arithmetic assumes CUSTOM_MAX_LEN)
        String variant = noCustom != null ? null : variant(p, withCluster(p, splits(p, info), info), stages(p.headDim(), info));
        switch (requested) {
            case CUSTOM:
                if (noCustom != null) {
                    throw new UnsupportedShapeException("backend", "CUSTOM gqa_decode needs " + noCustom, shape(p));
                }
                return new Decision(Backend.CUSTOM, variant, "forced CUSTOM");
            case VENDOR:
                if (noVendor != null) {
                    throw new UnsupportedShapeException("backend", "VENDOR gqa_decode needs " + noVendor, shape(p));
                }
                return new Decision(Backend.VENDOR, vendorVariant(p), "forced VENDOR");
            default:
                break;
        }
        if (noCustom != null && noVendor != null) {
            throw new UnsupportedShapeException("problem", "a shape one backend covers (custom: " + noCustom + "; vendor: "
                    + noVendor + ")", shape(p));
        }
        if (noCustom != null) {
            return new Decision(Backend.VENDOR, vendorVariant(p), "no custom kernel: " + noCustom);
        }
        if (noVendor != null) {
            return new Decision(Backend.CUSTOM, variant, "vendor composition unavailable: " + noVendor);
        }
        return new Decision(Backend.CUSTOM, variant, "tensor-core split-KV measured faster than the cuBLAS composition on "
                + "every harness row (H100: 1.07x-14x; 32/8 d128 B=1 L=8192 2.08x, paged16 B=4 L=8192 3.33x)");
    }

    /** The custom variant's name for a split of {@code p}, e.g. {@code decode_mma_c8_d128_h16x1_s8}. */
    static String variant(GqaDecode.Problem p, Split s) {
        return variant(p, s, stages(p.headDim()));
    }

    /**
     * As {@link #variant(GqaDecode.Problem, Split)} for rings of {@code stages} stages: a 4-warp block without a cluster
     * at fewer than its default stages runs the {@code s2_} entries, e.g. {@code decode_mma_s2_d128_h16x1_s4}.
     */
    static String variant(GqaDecode.Problem p, Split s, int stages) {
        return "decode_mma_" + s.kernelInfix() + stageInfix(p, s, stages) + "d" + p.headDim() + "_h16x" + headTiles(p.groupSize())
                + "_s" + s.splits();
    }

    /** {@code "s2_"} where {@code s} runs the 2-stage D = 128 entries, else empty (decode_mma.cu symbol names). */
    static String stageInfix(GqaDecode.Problem p, Split s, int stages) {
        boolean two = p.headDim() == 128 && stages == TWO_STAGES && s.warps() == THREADS / 32 && s.cluster() == 0;
        return two ? "s2_" : "";
    }

    private static String vendorVariant(GqaDecode.Problem p) {
        return "cublas_gemm+cudnn_logsoftmax+cublas_gemm" + (p.layout() == GqaDecode.KvLayout.PAGED ? "+gather" : "");
    }

    private static String shape(GqaDecode.Problem p) {
        return "B=" + p.batch() + " Hq=" + p.qHeads() + " Hkv=" + p.kvHeads() + " D=" + p.headDim() + " maxLen=" + p.maxLen()
                + " " + p.layout() + " " + p.dtype();
    }
}
