package dev.gapfill.ops;

import dev.gapfill.core.DType;
import dev.gapfill.core.DeviceInfo;

/**
 * Dispatch of {@link GroupedGemm}: which backend, which custom tile, how many CTAs. Pure functions of the
 * shape and the queried {@link DeviceInfo}, so a caller can ask for the decision without running the op.
 *
 * <p>Every threshold is PROVISIONAL: it comes from one run of the standalone harness on an H100 SXM
 * (bf16, weights [G, K, N], commit 69d1975, {@code cuda-native/dev/grouped_gemm/h100-69d1975.txt}), not yet
 * from the Java benchmark sweep ({@code gapfill bench grouped_gemm}), which must confirm or move them.
 */
public final class GroupedGemmHeuristics {
    private GroupedGemmHeuristics() {}

    /** The custom kernel keeps the per-group tile prefix sum in shared memory: 4·(G + 1) bytes. */
    public static final int MAX_CUSTOM_GROUPS = 4096;

    /**
     * Average rows per group at and above which the per-expert cuBLAS loop is chosen. Harness rows:
     * E=8 top-2 T=2048 (512 rows/group) loop 1969 µs vs custom 5045 µs gate-up, 730 vs 2636 µs down;
     * E=64 top-8 T=2048 (256 rows/group) loop 794 vs custom 833 µs (5 % apart), while E=128 top-8 T=4096
     * (256 rows/group) custom 1205 vs loop 1415 µs: the crossover lies between 256 and 512.
     */
    static final double VENDOR_ROWS_PER_GROUP = 384;

    /**
     * Coarse MoE decode (G ≤ 16 and fewer rows than groups): the cuBLAS loop wins. Harness rows: E=8 top-2
     * T=1 gate-up loop 181 µs vs custom 199 µs, down 101 vs 133 µs (too few tiles to hide the weight
     * stream's latency). Under CUDA-graph capture the custom path is used anyway (the loop needs the host).
     */
    static final int COARSE_GROUPS = 16;

    /** A custom tile configuration; mirrors {@code Config<...>} in grouped_gemm.cu. */
    public enum Variant {
        /** BM 16, BN 64, 4 stages, 4 warps, up to 4 CTAs per SM. */
        M16(16, 64, 4, 4),
        /** BM 64, BN 128, 3 stages, 4 warps, up to 2 CTAs per SM. */
        M64(64, 128, 3, 2);

        public final int bm;
        public final int bn;
        final int stages;
        final int maxCtasPerSm;

        Variant(int bm, int bn, int stages, int maxCtasPerSm) {
            this.bm = bm;
            this.bn = bn;
            this.stages = stages;
            this.maxCtasPerSm = maxCtasPerSm;
        }

        /** Kernel-name fragment, e.g. {@code m16}. */
        public String id() { return name().toLowerCase(java.util.Locale.ROOT); }

        /** Output columns of one tile. */
        int outCols(boolean swiglu) { return swiglu ? bn / 2 : bn; }

        /** Dynamic shared memory: the pipeline stages plus the schedule (G + 1 ints) and row table (BM ints). */
        public int smemBytes(GroupedGemm.WeightLayout layout, int groups) {
            int bk = 64;
            int a = bm * (bk + 8);
            int b = layout == GroupedGemm.WeightLayout.NK ? bn * (bk + 8) : bk * (bn + 8);
            return stages * (a + b) * 2 + 4 * (groups + 1 + bm);
        }
    }

    /**
     * One grouped GEMM call as the heuristics see it.
     *
     * @param groups  G, the number of experts
     * @param tTotal  rows of the grouped problem (Σ of all groups' rows)
     * @param k       reduction length
     * @param n       columns of W (2·I with SwiGLU)
     * @param swiglu  fused SwiGLU epilogue (output N/2 columns)
     * @param dtype   F16 or BF16
     * @param layout  weight layout
     */
    public record Shape(int groups, long tTotal, int k, int n, boolean swiglu, DType dtype, GroupedGemm.WeightLayout layout) {
        /** Output columns. */
        public int nOut() { return swiglu ? n / 2 : n; }

        /** Average rows per group. */
        public double rowsPerGroup() { return (double) tTotal / groups; }
    }

    /** Why the custom kernel cannot take this shape (alignment of addresses is checked by the op), or null. */
    public static String customUnsupported(Shape s, DeviceInfo info) {
        if (info.cc() < 80) {
            return "the custom kernel needs sm_80 or newer (mma.sync m16n8k16, cp.async); this device is sm_" + info.cc();
        }
        if (s.k() % 8 != 0) {
            return "K % 8 == 0 (16-byte cp.async rows); K = " + s.k();
        }
        if (s.n() % 8 != 0 || (s.swiglu() && s.nOut() % 8 != 0)) {
            return (s.swiglu() ? "N % 16 == 0 with SwiGLU (both halves in 16-byte chunks)" : "N % 8 == 0 (16-byte cp.async rows)")
                    + "; N = " + s.n();
        }
        if (s.groups() > MAX_CUSTOM_GROUPS) {
            return "G <= " + MAX_CUSTOM_GROUPS + " (the tile schedule lives in shared memory); G = " + s.groups();
        }
        return null;
    }

    /** The backend and variant AUTO runs; {@code requested} VENDOR or CUSTOM is honoured (CUSTOM must be supported). */
    public static Decision decide(Shape s, DeviceInfo info, Backend requested) {
        String unsupported = customUnsupported(s, info);
        if (requested == Backend.VENDOR) {
            return new Decision(Backend.VENDOR, "cublas_loop", "VENDOR requested");
        }
        if (requested == Backend.CUSTOM) {
            if (unsupported != null) {
                return new Decision(Backend.CUSTOM, "unsupported", unsupported);
            }
            Variant v = variant(s, info);
            return new Decision(Backend.CUSTOM, v.id(), "CUSTOM requested; " + variantReason(s, info, v));
        }
        if (unsupported != null) {
            return new Decision(Backend.VENDOR, "cublas_loop", "custom kernel needs " + unsupported);
        }
        if (s.rowsPerGroup() >= VENDOR_ROWS_PER_GROUP) {
            return new Decision(Backend.VENDOR, "cublas_loop", String.format(
                    "%.0f rows per group >= %.0f: large per-expert GEMMs, cuBLAS's tensor-core kernels win (provisional, H100 harness 69d1975: "
                            + "E=8 T=2048 loop 1969 us vs custom 5045 us)", s.rowsPerGroup(), VENDOR_ROWS_PER_GROUP));
        }
        if (s.groups() <= COARSE_GROUPS && s.tTotal() < s.groups()) {
            return new Decision(Backend.VENDOR, "cublas_loop", String.format(
                    "coarse decode (G=%d <= %d, %d rows): the cuBLAS loop wins (provisional, H100 harness 69d1975: E=8 T=1 down 101 us vs custom "
                            + "133 us); graph capture still runs CUSTOM", s.groups(), COARSE_GROUPS, s.tTotal()));
        }
        Variant v = variant(s, info);
        return new Decision(Backend.CUSTOM, v.id(), variantReason(s, info, v));
    }

    /**
     * Tile choice. With few tiles the 64x128 tile leaves SMs idle while the weights stream, so the 16x64 tile
     * (4x the tiles, 4 CTAs per SM) wins; otherwise 64x128 wins. Estimate of the 64x128 tile count:
     * max(active groups, ⌈T/64⌉) · ⌈N_out / tile cols⌉ with active groups ≤ min(T, G). Worked example (H100,
     * 132 SMs, threshold 2·132 = 264): E=64 top-8 T=1 gate-up → 8 groups · 16 col blocks = 128 tiles → m16
     * (46 vs 52 µs); T=16 → 64 · 16 = 1024 → m64 (196 vs 210 µs); E=8 top-2 T=1 gate-up (I=14336) → 2 · 224
     * = 448 → m64 (199 vs 216 µs); down (N=4096) → 2 · 32 = 64 → m16 (133 vs 218 µs).
     */
    public static Variant variant(Shape s, DeviceInfo info) {
        return tiles64(s) < 2L * info.smCount() ? Variant.M16 : Variant.M64;
    }

    static long tiles64(Shape s) {
        long active = Math.min(s.tTotal(), s.groups());
        long rowBlocks = Math.max(active, (s.tTotal() + 63) / 64);
        long colBlocks = (s.nOut() + Variant.M64.outCols(s.swiglu()) - 1) / Variant.M64.outCols(s.swiglu());
        return rowBlocks * colBlocks;
    }

    private static String variantReason(Shape s, DeviceInfo info, Variant v) {
        return String.format("~%d 64x128 tiles %s 2x%d SMs -> %s (provisional, H100 harness 69d1975)", tiles64(s),
                v == Variant.M16 ? "<" : ">=", info.smCount(), v.id());
    }

    /** CTAs resident per SM for the variant: its register-derived cap, then shared memory. */
    public static int ctasPerSm(Variant v, int smemBytes, DeviceInfo info) {
        long bySmem = info.smemPerSm() / (smemBytes + 1024L);  // 1 KiB reserved per CTA by the hardware
        return (int) Math.max(1, Math.min(v.maxCtasPerSm, bySmem));
    }

    /**
     * Persistent grid: smCount · CTAs per SM, but never more than the most tiles the problem can have,
     * (⌈T/BM⌉ + G) · ⌈N_out / tile cols⌉ (every group may add one partial row block).
     */
    public static int grid(Shape s, Variant v, DeviceInfo info) {
        int smem = v.smemBytes(s.layout(), s.groups());
        long full = (long) info.smCount() * ctasPerSm(v, smem, info);
        long colBlocks = (s.nOut() + v.outCols(s.swiglu()) - 1) / v.outCols(s.swiglu());
        long maxTiles = ((s.tTotal() + v.bm - 1) / v.bm + s.groups()) * colBlocks;
        return (int) Math.max(1, Math.min(full, maxTiles));
    }
}
