package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.UnsupportedShapeException;

/**
 * Dispatch of {@link GroupedGemm}: which backend, which custom tile, how many CTAs. Pure functions of the
 * shape and the queried {@link DeviceInfo}, so a caller can ask for the decision without running the op.
 *
 * <p>Every threshold comes from the standalone harness's sweep of issue 6's shapes on an H100 SXM (F16 and BF16, KN
 * weights plus NK rows at decode, both vendor paths timed with their host synchronisation, L2 flushed by a read;
 * {@code cuda-native/dev/grouped_gemm/h100-run1.txt}, table in docs/ops/grouped_gemm.md); the Java benchmark sweep
 * ({@code gapfill bench grouped_gemm}) must confirm them.
 */
public final class GroupedGemmHeuristics {
    private GroupedGemmHeuristics() {}

    /** The custom kernel keeps the per-group tile prefix sum in shared memory: 4·(G + 1) bytes. */
    public static final int MAX_CUSTOM_GROUPS = 4096;

    /** The H100 harness run every threshold below comes from (cuda-native/dev/grouped_gemm/h100-run1.txt). */
    static final String SOURCE = "H100 harness, dev/grouped_gemm/h100-run1.txt";

    /**
     * Rows per group above which big per-expert GEMMs (SwiGLU, or K·N at least {@link #VENDOR_MIN_KN}) go to cuBLAS.
     * Harness rows (bf16, µs): E=64 gate-up T=512 (64 rows/group) custom m64 290 vs grouped 338; T=2048 (256) grouped 688
     * vs m64 836; E=160 gate-up T=2048 (77) grouped 2554 vs m64 3330, down 1510 vs 1812.
     */
    static final double VENDOR_ROWS_PER_GROUP = 64;

    /**
     * Below this K·N the custom m64 tile keeps the down projection at any row count: E=64 down (K·N = 2.1M) T=2048 m64
     * 419 vs grouped 449 vs loop 716, T=8192 m64 1469 vs loop 1417 (4 %); E=128 down (1.6M) T=8192 m64 1176 vs grouped
     * 1349. E=160 down (7.9M) T=2048: grouped 1510 vs m64 1812. The loop rule below takes precedence: once the groups
     * are loop-sized (at least {@link #LOOP_ROWS_PER_GROUP} rows and {@link #LOOP_MIN_FLOP_PER_GROUP} FLOP each) the
     * cuBLAS loop wins whatever K·N is. Java sweep at c7982e3 (docs/benchmarks/h100/grouped_gemm.json, µs): E=64 down
     * T=8192 (1024 rows, 4.3 GFLOP per group) F16 loop 1385 vs m64 1484, BF16 1448 vs 1476.
     */
    static final long VENDOR_MIN_KN = 4L << 20;

    /**
     * At and above this many rows per group the per-expert loop beats cublasGemmGroupedBatchedEx: E=64 gate-up T=8192
     * (1024 rows) loop 1819 vs grouped 2429; E=160 T=8192 (307) loop 5570 vs 6809; E=128 T=8192 (512) loop 1993 vs
     * grouped 1928 (3 %).
     */
    static final double LOOP_ROWS_PER_GROUP = 300;

    /**
     * ...and only when each group's GEMM (2 · rows per group · K · N) is at least this many FLOP; below it the per-expert
     * GEMMs are too small for the loop and cublasGemmGroupedBatchedEx keeps them. Java sweep at c2335e1
     * (docs/benchmarks/h100/grouped_gemm.json, loop / grouped µs, F16 and BF16): E=64 gate-up T=8192 (8.6 GFLOP per
     * group) 1833 / 2428 and 1828 / 2444; E=160 gate-up T=8192 (9.7) 5630 / 6497 and 5480 / 8180; E=160 down T=8192
     * (4.8) 3455 / 4325 and 3405 / 4098; E=128 gate-up T=8192 (3.2) 1970 / 1953 and 2269 / 1954.
     */
    static final double LOOP_MIN_FLOP_PER_GROUP = 4e9;

    /**
     * Coarse MoE (G ≤ this): above {@link #VENDOR_ROWS_PER_GROUP} rows per group the per-expert loop wins: E=8 top-2
     * T=512 (128 rows/group) gate-up loop 1000 vs m64 1483 vs grouped 1559 µs, down 451 vs 890 vs 584. Coarse decode is
     * no longer sent to the loop: E=8 T=1 down d16 113 vs loop 116, gate-up m64 194 vs loop 200.
     */
    static final int COARSE_GROUPS = 16;

    /**
     * The decode tile d16 is used up to this many rows per active group for the down projection (any layout) and for
     * SwiGLU with NK weights: E=64 down T=32 (4 rows/group) d16 99.8 vs m64 104.5; E=64 down T=128 (16) m64 110.9 vs
     * d16 119.6; E=8 down T=32 (8) m64 341 vs d16 372. With SwiGLU and KN weights d16 lost in run 1 (E=64 gate-up T=1
     * 44.8 vs m16 37.2, T=8 215 vs m64 149), so KN SwiGLU keeps m16/m64.
     */
    static final double DECODE_ROWS_PER_GROUP = 4;

    /** The Hopper (wgmma) tiles exist only as sm_90a SASS: compute capability 9.0. */
    static final int HOPPER_CC = 90;

    /** The Hopper wgmma harness run the Hopper thresholds come from. */
    static final String HOPPER_SOURCE = "H100 harness, dev/grouped_gemm/h100-wgmma-sweep.txt";

    /** The H100 harness run behind the sm_90 decode choice (w64, or m16 with few tiles). */
    static final String HOPPER_DECODE_SOURCE = "H100 harness, dev/grouped_gemm/h100-decode-w64.txt";

    /**
     * On sm_90, above {@link #DECODE_ROWS_PER_GROUP} rows per active group the wgmma tiles replace m64: w64 up to this
     * many rows per active group, w128n2 above it when K is at least {@link #WIDE_MIN_K} or the groups have more than
     * {@link #WIDE_ALWAYS_ROWS} rows. H100 harness (run 4 of h100-wgmma-sweep.txt), bf16 µs: E=64 gate-up T=128 (16 rows)
     * w64 187 vs w128n2 206; E=128 gate-up T=512 (32 rows) w64 282 vs 305; E=64 gate-up T=512 (64 rows) w64 202 vs 209,
     * down 110 vs 113; E=160 gate-up T=2048 (77 rows) w128n2 1728 vs w64 1928; E=128 gate-up T=2048 (128 rows) w128n2
     * 363 vs w64 379, but down (K = 768) w64 215 vs 236; E=128 down T=8192 (512 rows) w128n2 560 vs w64 634.
     */
    static final double WIDE_ROWS_PER_GROUP = 64;

    /** See {@link #WIDE_ROWS_PER_GROUP}: the 128 x 256 tile's k loop is too short below this K at ~128 rows per group. */
    static final int WIDE_MIN_K = 1024;

    /** See {@link #WIDE_ROWS_PER_GROUP}. */
    static final double WIDE_ALWAYS_ROWS = 256;

    /**
     * On sm_90 coarse MoE (G ≤ {@link #COARSE_GROUPS}) goes to the cuBLAS loop above this many rows per group (run 4,
     * bf16 µs): E=8 top-2 T=512 (128 rows) w128n2 716 vs loop 1063 gate-up, 442 vs 462 down; T=2048 (512 rows) loop
     * 2066 vs w128n2 2181 gate-up, 799 vs 1136 down.
     */
    static final double HOPPER_COARSE_LOOP_ROWS = 256;

    /**
     * System property naming a variant (its {@link Variant#id()}, e.g. {@code w64}) that the custom path then runs
     * whatever the shape: GPU tests use it to run every tile the device has on the same problems. Unset in normal use.
     */
    public static final String DEBUG_VARIANT = "gapfill.debug.groupedGemmVariant";

    /**
     * A custom tile configuration; mirrors {@code Config<...>}, {@code DecodeConfig<...>} and {@code WConfig<...>} in
     * grouped_gemm.cu.
     */
    public enum Variant {
        /** BM 16, BN 64, 4 stages, 4 warps, up to 4 CTAs per SM. */
        M16(16, 64, 4, 4, false, 128, false),
        /** BM 64, BN 128, 3 stages, 4 warps, up to 2 CTAs per SM. */
        M64(64, 128, 3, 2, false, 128, false),
        /** Decode: 16 rows (the mma's n8 side) x 64 W columns (its m16 side), 8-stage ring across tiles, up to 2 CTAs per SM. */
        D16(16, 64, 8, 2, true, 128, false),
        /** Hopper (sm_90 only): BM 64, BN 128, one warpgroup of wgmma, 4 stages, up to 2 CTAs per SM. */
        W64(64, 128, 4, 2, false, 128, true),
        /** Hopper (sm_90 only): BM 128, BN 256, two warpgroups of wgmma (one m64n256k16 each per k16 step), 4 stages, 1 CTA per SM. */
        W128N2(128, 256, 4, 1, false, 256, true),
        /** Hopper (sm_90 only): W64 with 6 stages (four k tiles ahead), 1 CTA per SM: decode tiles that fit one wave. */
        W64S6(64, 128, 6, 1, false, 128, true);

        /** Rows of a tile (BM, or BT of the decode tile). */
        public final int bm;
        /** W columns of a tile (BN, or BNW of the decode tile); output columns are half of it with SwiGLU. */
        public final int bn;
        final int stages;
        final int maxCtasPerSm;
        final boolean decode;
        /** Threads per CTA. */
        public final int threads;
        /** Built for sm_90a only (wgmma): runs on compute capability 9.0 and nowhere else. */
        public final boolean hopper;

        Variant(int bm, int bn, int stages, int maxCtasPerSm, boolean decode, int threads, boolean hopper) {
            this.bm = bm;
            this.bn = bn;
            this.stages = stages;
            this.maxCtasPerSm = maxCtasPerSm;
            this.decode = decode;
            this.threads = threads;
            this.hopper = hopper;
        }

        /** Kernel-name fragment, e.g. {@code m16}. */
        public String id() { return name().toLowerCase(java.util.Locale.ROOT); }

        /** Output columns of one tile. */
        int outCols(boolean swiglu) { return swiglu ? bn / 2 : bn; }

        /**
         * Dynamic shared memory: the pipeline stages plus the schedule. The mma tiles keep the tile prefix (G + 1 ints)
         * and a row table (BM ints), the decode tile the tile prefix and each group's first and end row (3G + 1 ints).
         * The Hopper tiles' stages are unpadded 128-byte rows, (BM + BN) · 128 bytes each, after up to 1024 bytes that
         * align them to the swizzle atoms.
         */
        public int smemBytes(GroupedGemm.WeightLayout layout, int groups) {
            if (hopper) {
                return 1024 + stages * (bm + bn) * 128 + 4 * (groups + 1 + bm);
            }
            int bk = 64;
            int a = bm * (bk + 8);
            int b = layout == GroupedGemm.WeightLayout.NK ? bn * (bk + 8) : bk * (bn + 8);
            int schedule = decode ? 4 * (3 * groups + 1) : 4 * (groups + 1 + bm);
            return stages * (a + b) * 2 + schedule;
        }

        /** Static shared memory of the kernel: build_schedule's {@code warp_sums}, one int per warp. */
        int staticSmemBytes() {
            return threads / 32 * 4;
        }

        /**
         * Whether a block of this variant for {@code groups} groups fits the device's opt-in shared memory per block
         * ({@link #smemBytes} plus {@link #staticSmemBytes}); an unknown limit (0) counts as fitting. d16 at G = 4096 needs
         * 141 316 B: within an A100's 163 KiB, above the 99 KiB of sm_86 and sm_89 (which take d16 up to G = 766).
         */
        public boolean fits(GroupedGemm.WeightLayout layout, int groups, DeviceInfo info) {
            return info.smemPerBlockOptin() <= 0
                    || (long) smemBytes(layout, groups) + staticSmemBytes() <= info.smemPerBlockOptin();
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
        /**
         * @throws ArgumentException naming the component where groups, k or n is below 1, tTotal below 0, the dtype not
         *         F16 or BF16, or the layout null (the decisions read rows per group and sizes from them; a read-only
         *         review, fiftieth session)
         */
        public Shape {
            if (groups < 1 || k < 1 || n < 1) {
                String name = groups < 1 ? "groups" : k < 1 ? "k" : "n";
                throw new ArgumentException(name, name + " >= 1", String.valueOf(groups < 1 ? groups : k < 1 ? k : n));
            }
            if (tTotal < 0) {
                throw new ArgumentException("tTotal", "tTotal >= 0", String.valueOf(tTotal));
            }
            if (dtype != DType.F16 && dtype != DType.BF16) {
                throw new ArgumentException("dtype", "F16 or BF16", String.valueOf(dtype));
            }
            if (layout == null) {
                throw new ArgumentException("layout", "KN or NK", "null");
            }
        }

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
        if (!Variant.M16.fits(s.layout(), s.groups(), info)) {
            return "shared memory for the smallest tile (m16): " + smemNeed(Variant.M16, s, info);
        }
        return null;
    }

    /** "N B per block at G = g, the device allows M" for a variant that does not fit. */
    private static String smemNeed(Variant v, Shape s, DeviceInfo info) {
        return (v.smemBytes(s.layout(), s.groups()) + v.staticSmemBytes()) + " B per block at G = " + s.groups()
                + ", the device allows " + info.smemPerBlockOptin();
    }

    /** The backend and variant AUTO runs; {@code requested} VENDOR or CUSTOM is honoured (CUSTOM must be supported). */
    public static Decision decide(Shape s, DeviceInfo info, Backend requested) {
        if (s == null) {
            throw new ArgumentException("shape", "a grouped GEMM shape", "null");
        }
        if (info == null) {
            throw new ArgumentException("info", "the device's description", "null");
        }
        if (requested == null || requested == Backend.REFERENCE) {  // was read as AUTO
            throw new ArgumentException("backend", "AUTO, VENDOR or CUSTOM for tensors on a GPU (CPU tensors always run the reference)",
                    String.valueOf(requested));
        }
        String unsupported = customUnsupported(s, info);
        if (requested == Backend.VENDOR) {
            return new Decision(Backend.VENDOR, "cublas_loop", "VENDOR requested");
        }
        if (requested == Backend.CUSTOM) {
            if (unsupported != null) {
                return new Decision(Backend.CUSTOM, "unsupported", unsupported);
            }
            Variant v = variant(s, info);
            return Decision.lazy(Backend.CUSTOM, v.id(), () -> "CUSTOM requested; " + variantReason(s, info, v));
        }
        if (unsupported != null) {
            return new Decision(Backend.VENDOR, "cublas_loop", "custom kernel needs " + unsupported);
        }
        double rows = s.rowsPerGroup();
        boolean coarse = s.groups() <= COARSE_GROUPS;
        if (info.cc() == HOPPER_CC) {
            if (coarse && rows > HOPPER_COARSE_LOOP_ROWS) {
                return Decision.lazy(Backend.VENDOR, "cublas_loop", () -> String.format(
                        "%.0f rows per group > %.0f on coarse MoE (G <= %d): large per-expert GEMMs, the cuBLAS loop wins (%s, bf16: "
                                + "E=8 T=2048 gate-up loop 2066 us vs w128n2 2181, down 799 vs 1136)",
                        rows, HOPPER_COARSE_LOOP_ROWS, COARSE_GROUPS, HOPPER_SOURCE));
            }
            Variant v = variant(s, info);
            return Decision.lazy(Backend.CUSTOM, v.id(), () -> variantReason(s, info, v));
        }
        boolean bigGemm = s.swiglu() || (long) s.k() * s.n() >= VENDOR_MIN_KN;
        double flopPerGroup = 2.0 * rows * s.k() * s.n();
        boolean loopSized = rows >= LOOP_ROWS_PER_GROUP && flopPerGroup >= LOOP_MIN_FLOP_PER_GROUP;
        if (rows > VENDOR_ROWS_PER_GROUP && (bigGemm || coarse || loopSized)) {
            if (!coarse && !loopSized) {
                return Decision.lazy(Backend.VENDOR, "cublas_grouped", () -> String.format(
                        "%.0f rows per group > %.0f on G=%d > %d groups, %s, and %s: cublasGemmGroupedBatchedEx wins; its GEMM result is "
                                + "rounded to the dtype before the epilogue (%s: E=64 gate-up T=2048 grouped 688 us vs m64 836 vs loop 840; "
                                + "Java sweep c2335e1: E=128 gate-up T=8192, 3.2 GFLOP per group, grouped 1954 us vs loop 2269)",
                        rows, VENDOR_ROWS_PER_GROUP, s.groups(), COARSE_GROUPS, s.swiglu() ? "SwiGLU" : "K*N >= 4M",
                        rows < LOOP_ROWS_PER_GROUP
                                ? String.format("fewer than %.0f rows per group", LOOP_ROWS_PER_GROUP)
                                : String.format("%.1f GFLOP per group < %.0f", flopPerGroup / 1e9, LOOP_MIN_FLOP_PER_GROUP / 1e9),
                        SOURCE));
            }
            return Decision.lazy(Backend.VENDOR, "cublas_loop", () -> String.format(
                    "%.0f rows per group > %.0f on %s: large per-expert GEMMs, the cuBLAS loop wins (%s: E=8 T=512 gate-up loop 1000 us "
                            + "vs m64 1483; E=64 T=8192, 8.6 GFLOP per group, loop 1819 vs grouped 2429; Java sweep c7982e3: E=64 down "
                            + "T=8192, 4.3 GFLOP per group, loop 1385 vs m64 1484)", rows, VENDOR_ROWS_PER_GROUP,
                    coarse ? "coarse MoE (G <= " + COARSE_GROUPS + ")"
                            : String.format("%.1f GFLOP per group >= %.0f", flopPerGroup / 1e9, LOOP_MIN_FLOP_PER_GROUP / 1e9), SOURCE));
        }
        Variant v = variant(s, info);
        return Decision.lazy(Backend.CUSTOM, v.id(), () -> variantReason(s, info, v));
    }

    /** Rows per active group, with at most min(G, T_total) groups active. */
    static double rowsPerActiveGroup(Shape s) {
        long active = Math.max(1, Math.min(s.tTotal(), s.groups()));
        return (double) s.tTotal() / active;
    }

    /**
     * Tile choice. Decode tile d16 when rows per active group ≤ {@link #DECODE_ROWS_PER_GROUP} for the down projection
     * (any layout) or SwiGLU with NK weights, unless its tile count lands between one and 1.5 waves of its grid (the
     * second wave runs a few CTAs alone: E=160 top-6 T=1 gate-up NK, 288 tiles on 264 CTAs, d16 95.5 vs m16 83.6 µs;
     * E=8 top-2 T=8 down, 512 tiles = 1.94 waves, d16 269 vs m16 277).
     * Otherwise the mma tiles: with few tiles the 64x128 tile leaves SMs idle while the weights stream, so the 16x64
     * tile (4x the tiles, 4 CTAs per SM) wins, as long as the groups have few rows (≤ {@link #DECODE_ROWS_PER_GROUP}
     * per active group: E=8 top-2 T=32 down, 8 rows per group and 256 tiles, m64 341 vs m16 404); else 64x128. Estimate of the 64x128 tile count: max(active groups,
     * ⌈T/64⌉) · ⌈N_out / tile cols⌉ with active groups ≤ min(T, G). Worked examples (H100, 132 SMs, threshold 264;
     * bf16 µs): E=64 top-8 T=1 gate-up KN → 8 · 16 = 128 tiles → m16 (37.2 vs m64 50.0); T=8 → 64 · 16 = 1024 → m64
     * (149 vs m16 170); E=8 top-2 T=1 gate-up KN → 2 · 224 = 448 → m64 (194 vs m16 205); E=64 T=1 down → d16 (18.3
     * vs m16 19.4); E=64 T=1 gate-up NK → d16 (31.7 vs m16 35.8).
     *
     * <p>On sm_90, up to {@link #DECODE_ROWS_PER_GROUP} rows per active group, every projection and layout, the estimated
     * 64x128 tile count decides: below half the SMs m16 (4x the tiles), up to one tile per SM w64s6 (w64 with a 6-stage
     * ring and one CTA per SM), above that w64. H100 harness, bf16 µs ({@link #HOPPER_DECODE_SOURCE}: m16 / m64 / w64 /
     * w128n2 on 72 rows, T = 1, 8, 32 on the four MoE configurations, gate-up and down, KN and NK; and
     * dev/grouped_gemm/h100-w64s6.txt): E=8 top-2 T=1 down (64 tiles) m16 92.6, w64 109.6; E=64 top-8 T=1 gate-up KN
     * (128 tiles) w64s6 29.0, w64 31.1, m16 35.0; E=128 T=1 gate-up (96) w64s6 24.2, w64 28.1; E=64 T=1 down (128) w64s6
     * 17.1, w64 18.0; E=160 top-6 T=1 gate-up KN (144, two waves of one CTA per SM) w64 71.6, w64s6 91.3, m16 84.4; E=64
     * T=8 gate-up KN w64 132.8, m64 144.7; E=8 T=1 gate-up KN (448) w64 159.4, m64 176.0. On the 48 rows (T = 1 and 8)
     * that ran m16, w64 and w64s6 together, twice, the pick is within 7 % of the fastest of the three (the one row past
     * 4 %: E=8 T=1 down bf16 KN, m16 93.3 vs w64s6 87.4, where f16 gives w64s6 104.6 vs m16 93.6). The sm_80 rules
     * above (d16, m16, m64) date from before the mma tiles resolved their copies once per tile (b9a1196), and no Ampere
     * part has measured them since: on the H100 m16 is now within 3 % of d16 or faster on every decode row
     * (dev/grouped_gemm/h100-decode-m16-d16.txt).
     */
    public static Variant variant(Shape s, DeviceInfo info) {
        String forced = System.getProperty(DEBUG_VARIANT, "");
        if (!forced.isEmpty()) {
            Variant v;
            try {
                v = Variant.valueOf(forced.toUpperCase(java.util.Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new UnsupportedShapeException(DEBUG_VARIANT, "one of m16, m64, d16, w64, w128n2, w64s6", forced);
            }
            if (v.hopper && info.cc() != HOPPER_CC) {
                throw new UnsupportedShapeException(DEBUG_VARIANT, "a variant this device runs (" + v.id() + " is sm_90 only)",
                        "sm_" + info.cc());
            }
            if (!v.fits(s.layout(), s.groups(), info)) {
                throw new UnsupportedShapeException(DEBUG_VARIANT, "a variant whose shared memory fits a block of this device ("
                        + v.id() + " needs " + smemNeed(v, s, info) + ")", v.id());
            }
            return v;
        }
        if (info.cc() == HOPPER_CC) {
            double r = rowsPerActiveGroup(s);
            if (r <= DECODE_ROWS_PER_GROUP) {
                long tiles = tiles64(s);
                return 2 * tiles < info.smCount() ? Variant.M16 : tiles <= info.smCount() ? Variant.W64S6 : Variant.W64;
            }
            boolean wide = r > WIDE_ROWS_PER_GROUP && (s.k() >= WIDE_MIN_K || r > WIDE_ALWAYS_ROWS);
            return wide ? Variant.W128N2 : Variant.W64;
        }
        if (decodeCandidate(s) && Variant.D16.fits(s.layout(), s.groups(), info)) {
            long tiles = decodeTiles(s);
            long grid = (long) info.smCount() * ctasPerSm(Variant.D16, Variant.D16.smemBytes(s.layout(), s.groups()), info);
            if (tiles <= grid || 2 * tiles >= 3 * grid) {
                return Variant.D16;
            }
        }
        Variant v = tiles64(s) < 2L * info.smCount() && rowsPerActiveGroup(s) <= DECODE_ROWS_PER_GROUP ? Variant.M16 : Variant.M64;
        // d16's schedule (3G + 1 ints) outgrows 99 KiB of opt-in shared memory (sm_86, sm_89) from G = 767; m64's
        // (G + 65 ints) fits there up to G = 4096, m16's everywhere customUnsupported lets the custom path run
        return v.fits(s.layout(), s.groups(), info) ? v : Variant.M16;
    }

    /** The shapes the sm_80 rule considers for d16: the down projection (any layout) or SwiGLU with NK weights, few rows. */
    private static boolean decodeCandidate(Shape s) {
        boolean decodeShape = !s.swiglu() || s.layout() == GroupedGemm.WeightLayout.NK;
        return decodeShape && rowsPerActiveGroup(s) <= DECODE_ROWS_PER_GROUP;
    }

    /** Estimated d16 tiles: max(active groups, ⌈T/16⌉) row blocks times the column blocks. */
    static long decodeTiles(Shape s) {
        long active = Math.max(1, Math.min(s.tTotal(), s.groups()));
        long rowBlocks = Math.max(active, (s.tTotal() + Variant.D16.bm - 1) / Variant.D16.bm);
        long colBlocks = (s.nOut() + Variant.D16.outCols(s.swiglu()) - 1) / Variant.D16.outCols(s.swiglu());
        return rowBlocks * colBlocks;
    }

    static long tiles64(Shape s) {
        long active = Math.min(s.tTotal(), s.groups());
        long rowBlocks = Math.max(active, (s.tTotal() + 63) / 64);
        long colBlocks = (s.nOut() + Variant.M64.outCols(s.swiglu()) - 1) / Variant.M64.outCols(s.swiglu());
        return rowBlocks * colBlocks;
    }

    private static String variantReason(Shape s, DeviceInfo info, Variant v) {
        if (v == Variant.D16) {
            return String.format("%.1f rows per active group <= %.0f, ~%d decode tiles -> d16 (%s: E=64 down T=1 d16 18.3 us vs m16 19.4)",
                    rowsPerActiveGroup(s), DECODE_ROWS_PER_GROUP, decodeTiles(s), SOURCE);
        }
        if (info.cc() == HOPPER_CC && rowsPerActiveGroup(s) <= DECODE_ROWS_PER_GROUP
                && (v == Variant.M16 || v == Variant.W64 || v == Variant.W64S6)) {
            return String.format("sm_90, %.1f rows per active group <= %.0f, ~%d 64x128 tiles on %d SMs (m16 below half of them, "
                    + "w64s6 up to one per SM, w64 above) -> %s (%s: E=8 down T=1 m16 92.6 us vs w64 109.6 at 64 tiles; E=64 gate-up "
                    + "T=1 w64s6 29.0 vs w64 31.1 at 128; E=160 gate-up T=1 w64 71.6 vs w64s6 91.3 at 144)", rowsPerActiveGroup(s),
                    DECODE_ROWS_PER_GROUP, tiles64(s), info.smCount(), v.id(), HOPPER_DECODE_SOURCE);
        }
        if (v.hopper) {
            return String.format("sm_90, %.1f rows per active group, K = %d -> %s (w128n2 above %.0f rows with K >= %d or above %.0f "
                    + "rows; %s)", rowsPerActiveGroup(s), s.k(), v.id(), WIDE_ROWS_PER_GROUP, WIDE_MIN_K, WIDE_ALWAYS_ROWS, HOPPER_SOURCE);
        }
        String reason = String.format("~%d 64x128 tiles %s 2x%d SMs -> %s (%s)", tiles64(s), v == Variant.M16 ? "<" : ">=", info.smCount(),
                v.id(), SOURCE);
        if (!v.hopper && decodeCandidate(s) && !Variant.D16.fits(s.layout(), s.groups(), info)) {
            reason += "; d16 not taken: it needs " + smemNeed(Variant.D16, s, info);
        }
        return reason;
    }

    /** CTAs resident per SM for the variant: its register-derived cap, then shared memory. */
    public static int ctasPerSm(Variant v, int smemBytes, DeviceInfo info) {
        return (int) Math.max(1, Math.min(v.maxCtasPerSm, Occupancy.bySharedMemory(smemBytes, info)));
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
