package dev.gapfill.ops;

import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.UnsupportedShapeException;

/**
 * Dispatch for {@link GqaDecode}: which backend runs a shape, and how the custom kernel splits the KV range.
 *
 * <p>All thresholds are PROVISIONAL: they come from the standalone harness run on an H100 SXM (132 SMs) at commit
 * 30c10a3, file {@code cuda-native/dev/gqa_decode/h100-30c10a3.txt} (rows cited below as "harness"), with the
 * vendor side timed as cuBLAS GEMM → fused mask+softmax kernel → cuBLAS GEMM (a little faster than the Java vendor
 * path, which runs the mask, cuDNN log-softmax and the exp as three passes). They are to be re-derived from the
 * {@code gqa_decode} benchmark file once it exists.
 */
public final class GqaDecodeHeuristics {
    /** Threads per block of the split kernel (split_kv.cu kThreads). */
    public static final int THREADS = 128;
    /** Keys per split are a multiple of this (the largest keys-per-iteration of a block: D=64, 16 groups × 4 keys). */
    public static final int CHUNK_ALIGN = 64;
    /** Fewest keys a split takes: below it the per-split q load, block merge and partial write dominate. */
    public static final int MIN_CHUNK = 128;
    /** Most splits (bounds the workspace B·Hq·splits·D·4 bytes). */
    public static final int MAX_SPLITS = 256;
    /** Grid y and z limit. */
    private static final int GRID_YZ = 65535;

    private GqaDecodeHeuristics() {}

    /** Query heads one block keeps in registers: G rounded up to 1, 2, 4 or 8 (G > 8 uses several tiles). */
    public static int headTile(int g) {
        return g <= 1 ? 1 : g <= 2 ? 2 : g <= 4 ? 4 : 8;
    }

    /** Head tiles per KV head: ceil(G / headTile). Each tile reads its KV range once (tiles after the first mostly from L2). */
    public static int headTiles(int g) {
        int t = headTile(g);
        return (g + t - 1) / t;
    }

    /**
     * How the custom kernel splits each (sequence, KV head) range.
     *
     * @param splits blocks per (sequence, KV head, head tile); 1 writes o directly, more go through the merge kernel
     * @param chunk  keys per split (a multiple of {@link #CHUNK_ALIGN}); split s covers [s·chunk, (s+1)·chunk)
     */
    public record Split(int splits, int chunk) {}

    /**
     * Split count: enough blocks for about four resident 128-thread blocks per SM, at least {@link #MIN_CHUNK} keys
     * per split. Worked example: B=1, Hkv=8, G=4, maxLen=4096 on 132 SMs: 8 blocks without splitting; 4·132/8 = 66
     * splits would give 63 keys each, so the 128-key minimum caps it at 32 splits (256 blocks). Harness split sweep:
     * s32 = 29.9 µs against s16 = 36.6, s64 = 38.2, s1 = 359. For B=1 Hkv=32 L=8192 the rule gives 16 (harness:
     * s16 = 67.4 µs, s8 = 94.5); for B=64 Hkv=8 L=512, 2 (s2 = 101.7, s1 = 113.0). Provisional: at B=1 Hkv=8
     * L=32768 it gives 64 (126.7 µs) where 32 measured 116.5.
     */
    public static Split splits(GqaDecode.Problem p, DeviceInfo info) {
        long ctas = (long) p.batch() * p.kvHeads() * headTiles(p.groupSize());
        long target = 4L * info.smCount();
        int splits = (int) Math.max(1, Math.min(MAX_SPLITS, (target + ctas - 1) / ctas));
        int maxByChunk = Math.max(1, (p.maxLen() + MIN_CHUNK - 1) / MIN_CHUNK);
        splits = Math.min(splits, maxByChunk);
        int chunk = (p.maxLen() + splits - 1) / splits;
        chunk = (chunk + CHUNK_ALIGN - 1) / CHUNK_ALIGN * CHUNK_ALIGN;
        splits = Math.max(1, (p.maxLen() + chunk - 1) / chunk);
        return new Split(splits, chunk);
    }

    /** Null if the custom kernels cover {@code p}, else why not (for the UnsupportedShapeException). */
    public static String customUnsupported(GqaDecode.Problem p) {
        int d = p.headDim();
        if (d != 64 && d != 128 && d != 256) {
            return "headDim in {64, 128, 256}, got " + d;
        }
        if (p.batch() > GRID_YZ) {
            return "batch <= " + GRID_YZ + ", got " + p.batch();
        }
        if ((long) p.kvHeads() * headTiles(p.groupSize()) > GRID_YZ) {
            return "kvHeads·ceil(G/8) <= " + GRID_YZ;
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
        return null;
    }

    /**
     * The backend for {@code p}. AUTO picks CUSTOM where the harness measured it faster than the cuBLAS composition
     * (f16; the bf16 rows give the same ratios within 2 %). At commit 30c10a3 the custom kernel is instruction-bound for
     * G ≥ 4 (see split_kv.cu), so the rule depends on the layout:
     * <ul>
     *   <li>PAGED (the vendor path pays a gather of every live row first): CUSTOM when G ≤ 4 (harness: 32/8 d128 wins
     *   from 1.19× at B=4 L=512 to 2.61× at B=1 L=131072, one loss 0.96× at B=1 L=512; 32/32 1.34×–2.72× on every row),
     *   or when B·Hkv ≤ 8 and maxLen ≥ 8192 (64/8 B=1 L=8192 1.22×; 28/4 B=1 L=131072 2.70×; 16/2 d64 B=4 L=8192 1.51×);
     *   VENDOR otherwise (64/8 B=16 L=8192 0.81×, 28/4 B=16 L=8192 0.71×, 16/2 d64 B=64 L=512 0.82×);</li>
     *   <li>contiguous (BHLD, and BLHD by the same rule although its vendor path loops over min(B, Hkv) GEMM pairs):
     *   CUSTOM when B·Hkv ≤ 8, maxLen ≥ 8192 and B·Hq·D ≤ 4096 (32/8 d128 B=1 L=8192 1.10×, L=32768 1.18×; 16/2 d64
     *   B=4 L=8192 1.11×; 28/4 d128 B=1 L=8192 0.94×, the one loss this rule accepts), or when B·Hkv ≤ 8 and
     *   maxLen ≥ 131072 (64/8 B=1 L=131072 1.35×; 28/4 B=1 2.16×; 16/2 B=4 2.44×); VENDOR otherwise (32/8 B=4
     *   L=8192 0.75×, 64/8 B=16 L=8192 0.35×, 32/32 B=1 L=32768 0.88×).</li>
     * </ul>
     * Where one backend does not cover the shape AUTO takes the other.
     */
    public static Decision decide(GqaDecode.Problem p, DeviceInfo info, Backend requested) {
        String noCustom = customUnsupported(p);
        String noVendor = vendorUnsupported(p, info);
        Split s = splits(p, info);
        String variant = "split_kv_d" + p.headDim() + "_g" + headTile(p.groupSize()) + "x" + headTiles(p.groupSize())
                + "_s" + s.splits();
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
        if (noVendor != null) {
            return new Decision(Backend.CUSTOM, variant, "vendor composition unavailable: " + noVendor);
        }
        if (noCustom != null) {
            return new Decision(Backend.VENDOR, vendorVariant(p), "no custom kernel: " + noCustom);
        }
        long pairs = (long) p.batch() * p.kvHeads();
        long bhqd = (long) p.batch() * p.qHeads() * p.headDim();
        if (p.layout() == GqaDecode.KvLayout.PAGED) {
            if (p.groupSize() <= 4) {
                return new Decision(Backend.CUSTOM, variant, "paged, G=" + p.groupSize() + " <= 4: the vendor path gathers the cache "
                        + "first (provisional, harness 30c10a3: 32/8 d128 paged16 1.19x-2.61x, 32/32 1.34x-2.72x)");
            }
            if (pairs <= 8 && p.maxLen() >= 8192) {
                return new Decision(Backend.CUSTOM, variant, "paged, B·Hkv=" + pairs + " <= 8, maxLen >= 8192 (provisional, harness "
                        + "30c10a3: 64/8 d128 B=1 L=8192 1.22x)");
            }
            return new Decision(Backend.VENDOR, vendorVariant(p), "paged, G=" + p.groupSize() + " > 4 and B·Hkv=" + pairs
                    + ": the cuBLAS composition measured faster (provisional, harness 30c10a3: 64/8 d128 B=16 L=8192 0.81x)");
        }
        if (pairs <= 8 && p.maxLen() >= 8192 && bhqd <= 4096) {
            return new Decision(Backend.CUSTOM, variant,
                    "B·Hkv=" + pairs + " <= 8, maxLen >= 8192, B·Hq·D <= 4096: split-KV fills the GPU where the batched GEMMs "
                            + "cannot (provisional, harness 30c10a3: 32/8 d128 B=1 L=8192 1.10x)");
        }
        if (pairs <= 8 && p.maxLen() >= 131072) {
            return new Decision(Backend.CUSTOM, variant,
                    "B·Hkv=" + pairs + " <= 8 and maxLen >= 131072 (provisional, harness 30c10a3: 64/8 d128 B=1 L=131072 1.35x)");
        }
        return new Decision(Backend.VENDOR, vendorVariant(p),
                "the cuBLAS composition measured faster here (provisional, harness 30c10a3: custom is instruction-bound for "
                        + "G >= 4 and B·Hkv > 8)");
    }

    private static String vendorVariant(GqaDecode.Problem p) {
        return "cublas_gemm+cudnn_logsoftmax+cublas_gemm" + (p.layout() == GqaDecode.KvLayout.PAGED ? "+gather" : "");
    }

    private static String shape(GqaDecode.Problem p) {
        return "B=" + p.batch() + " Hq=" + p.qHeads() + " Hkv=" + p.kvHeads() + " D=" + p.headDim() + " maxLen=" + p.maxLen()
                + " " + p.layout() + " " + p.dtype();
    }
}
