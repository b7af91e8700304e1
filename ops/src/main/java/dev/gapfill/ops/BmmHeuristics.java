package dev.gapfill.ops;

import dev.gapfill.core.DType;
import dev.gapfill.core.DeviceInfo;

/**
 * Dispatch and launch planning of {@link Bmm}: pure functions of the problem and the queried device.
 *
 * <p>Thresholds come from one H100 run of the standalone harness at commit 71656b2
 * ({@code cuda-native/dev/bmm/results-h100-71656b2.txt}: custom vs cuBLAS strided batched, L2 flushed,
 * medians of 30); rows are quoted as "dtype batch m×n×k: vendor µs / custom µs". They are measured on
 * Hopper only; the Java bench ({@code BmmBench}) re-measures them through the library. The choice
 * between the two custom kernels ({@code bmm_small}, {@code bmm_team}; {@link #useTeam}) and rule 4b
 * come from the run at 4de5ecd ({@code results-h100-4de5ecd.txt}, read-based L2 flush, medians of 25),
 * quoted as "team µs / small µs" with the team kernel in its shipped plan ({@link #teamPlan}).
 * <ol>
 *   <li>m, n or k above 128: VENDOR. The custom kernels stage whole operands in shared memory and
 *   are not built beyond 128.</li>
 *   <li>Shared B with A not transposed: VENDOR, one GEMM with m' = batch·m
 *   (f16 2048 64³ shared: 16.6 / 33.1; f32: 47.2 / 52.4), except where bmm_frag takes the shape (m, n, k ≤ 16; harness
 *   {@code results-h100-frag32.txt}, 2048 16³ shared: f16 7.26 / 4.80, bf16 6.37 / 4.74, f32 8.16 / 5.54).</li>
 *   <li>F16/BF16: CUSTOM when max(m,n,k) ≤ 48 and (m·n·k ≤ 32³ or batch ≤ 1024). Wins: f16 8192 8³ 31.9 / 9.5; 2048 16³ 12.8 / 6.5; 8192 32³ 33.9 / 29.0; 2048 17×33×9
 *   17.6 / 10.8; 512 48³ 9.1 / 8.7; 512 64³ 42.0 / 10.9 (bf16 10.2 / 10.8). The re-run at f72aa19
 *   ({@code results-h100-f72aa19.txt}) measured 512 64³ as a tie (f16 10.4 / 10.5, bf16 10.5 / 10.5),
 *   within AUTO's 5 %, and reproduced every other decision here; the run at 4de5ecd measured it as a
 *   vendor win (f16 8.70 / 9.50, bf16 8.61 / 9.57), so max(m,n,k) ≤ 64 at batch ≤ 512, once a
 *   custom clause, now goes to the vendor. Losses that set the bounds: 2048 48³ 18.9 / 20.0; 2048 64³ 24.5 / 29.0; 2048 1×64×64
 *   13.8 / 15.0; 2048 100³ 81.1 / 95.3; everything ≥ 96.</li>
 *   <li>(3c) On compute capability 9.0, F16/BF16 rows in 8-byte but not 16-byte multiples with at least
 *   {@link #WG_EIGHT_BYTE_MIN_WARP_TILES} warp tiles, batch ≥ {@link #WG_AUTO_MIN_BATCH}, tensors on 16 bytes and every operand a
 *   16-byte multiple ({@link #useWg}): CUSTOM with bmm_wg (wgmma; H100 harness {@code results-h100-wg.txt}, f16 cuBLAS /
 *   bmm_wg µs: 2048 100³ 76.13 / 46.66, 512 100³ 20.74 / 16.00, 8192 100³ 253.41 / 176.70, 2048 76³ 67.07 / 31.78).
 *   With 16-byte rows cuBLAS stays ahead (2048 96³ 37.38 / 42.02, 128³ 64.96 / 81.41), so those go on to the rules
 *   below.</li>
 *   <li>(3b) F16/BF16 rows in 8-byte but not 16-byte multiples (or 16-byte rows on 8-byte pointers), not taken by
 *   rule 3 or the team rule, at most {@link #TEAM8_AUTO_MAX_WARP_TILES} warp tiles, batch ≥ {@link #TEAM8_AUTO_MIN_BATCH}:
 *   CUSTOM with bmm_team8 (sweep at dd4a11e: 2048 60³ 1.36-1.46×, 76³ 1.41-1.74×, 36×44×52 1.55-1.59× cuBLAS; the
 *   constants' javadoc has the measurements).</li>
 *   <li>(4a) F32, neither operand transposed, m, n, k ≤ 16: CUSTOM with bmm_frag (harness {@code results-h100-frag32.txt}:
 *   2048 16³ 11.14 / 5.89; 2048 8³ 10.24 / 4.38; 8192 8³ 35.81 / 5.76; 512 16³ 6.62 / 5.12; bmm_small 7.14, 5.82,
 *   7.36, 5.38 on the same rows).</li>
 *   <li>F32: CUSTOM when neither operand is transposed and max(m,n,k) ≤ 48. Wins: 8192 8³ 36.4 / 8.0;
 *   8192 48³ 134.3 / 104.6; 2048 17×33×9 15.4 / 13.6. Losses: 2048 64³ 52.4 / 55.2; 2048 128³ 250 / 408;
 *   transposed 2048 32³ (A^T, B^T) 18.8 / 24.9.</li>
 *   <li>(4c) F32, neither operand transposed, batch ≥ 8192, 64 < m, n, k ≤ 96: CUSTOM (bmm_small). Sweep at
 *   a930cb5: 8192 96³ vendor 575.6, custom 542.7 (AUTO then ran the vendor, 6 % off the faster path); at 2048 a
 *   tie (151.2 / 147.8) and at 512 a loss (43.2 / 51.1), so the rule starts at 8192; at 8192 64³ the vendor
 *   still wins (171.7 / 188.5), hence the strict lower bound.</li>
 *   <li>(4d) F32, neither operand transposed, batch ≥ 1024, 32 < m, n, k, 48 < max(m,n,k) ≤ 96, where cuBLAS pads m and n
 *   to 32 enough ({@link #f32PaddingFavoursCustom}): CUSTOM (2048 76³ 122.0 / 90.4; 2048 68³ 111.7 / 76.7; but 2048
 *   60³ 47.0 / 51.1 stays with cuBLAS).</li>
 *   <li>(4b) F32, neither operand transposed, m = 1, n, k ≤ 64, batch ≥ 2048, rows in 16-byte multiples:
 *   CUSTOM with bmm_team (2048 1×64×64: vendor 21.73, team 17.89, bmm_small 28.48; run 4de5ecd).</li>
 * </ol>
 * Where the custom path runs, F16/BF16 with m, n, k ≤ {@link #FRAG_MAX_DIM} and even stored row lengths takes
 * {@code bmm/bmm_frag} (operands loaded straight into mma fragments, no shared memory; {@link #useFrag},
 * {@link #fragPlan}). H100 harness A/B at dcc8ffc ({@code cuda-native/dev/bmm/results-h100-dcc8ffc-frag.txt}):
 * frag/bmm_small 0.58–0.93 on every even shape (8³ batch 8192: 5.41 against 9.34 µs), 1.03 at 9×15×7 (element loads).
 * Above 16, up to {@link #FRAG32_MAX_DIM}, the same even-row shapes without a shared B take {@code bmm_frag32_*} (the
 * same register path, one to four warps per matrix; {@link #useFrag32}, {@link #frag32Plan}), which replaced bmm_team
 * and bmm_small there: H100 harness ({@code cuda-native/dev/bmm/results-h100-frag32h.txt}), f16 32³ frag32 / bmm_small /
 * bmm_team µs: batch 512 5.31 / 5.60 / 6.46, 2048 8.16 / 9.02 / 9.09, 8192 19.26 / 23.30 / 19.97; A^T B^T at 2048 7.97 /
 * 9.06 / 9.02 (BF16 the same within 0.15 µs). A shared B stays with the vendor there (2048 32³: cuBLAS 8.58, frag32 8.99).
 */
public final class BmmHeuristics {
    /** bmm_team is chosen from this batch on (f16 2048 32³: team 8.90 / small 9.09; at 512: 6.24 / 5.54). */
    public static final long TEAM_MIN_BATCH = 2048;
    /** bmm_team takes max(m,n,k) above this (f16 8192 16³: team 11.20 / small 9.98). */
    public static final int TEAM_MIN_DIM_EXCLUSIVE = 16;
    /** F32: bmm_team up to this max(m,n,k) (8192 32³: 38.40 / 40.99; 8192 48³: 94.30 / 98.82). */
    public static final int F32_TEAM_MAX_DIM = 48;
    /** F32 with m = 1: AUTO runs bmm_team for n, k up to this (rule 4b; 2048 1×64×64: vendor 21.73, team 17.89). */
    public static final int F32_ROW_TEAM_MAX_DIM = 64;
    /** Registers per thread the team kernel may use ({@code __launch_bounds__(256, 2)}): occupancy bound of {@link #teamPlan}. */
    static final int TEAM_MAX_REGISTERS = 128;
    /** Largest m, n and k of the custom kernels. */
    public static final int CUSTOM_MAX_DIM = 128;
    /**
     * The custom kernels take batches up to {@code Integer.MAX_VALUE} less this: bmm_small's blocks index their matrices
     * as {@code blockIdx.x · mats + j} in 32-bit arithmetic, which must not wrap past the last block's last slot (mats is
     * at most 512, the F32 plan's cap).
     */
    public static final int CUSTOM_BATCH_MARGIN = 4096;
    /**
     * F16/BF16: AUTO runs bmm_gemv's dot form (n = 1, A as stored) up to this max(m,n,k). H100 harness
     * ({@code cuda-native/dev/bmm/results-h100-gemv.txt}, cuBLAS / gemv µs): f16 2048 64×1×64 12.03 / 11.52, 32×1×32
     * 11.74 / 6.02, 48×1×48 11.84 / 9.12; 512 64×1×64 7.33 / 6.21; 8192 64×1×64 31.52 / 29.82 (BF16 within 0.3 µs; three
     * later machines within 0.4 µs); at 128 cuBLAS keeps it (128×1×128 27.23 / 32.61). The axpy form (m = 1, B as stored)
     * stays with the earlier rules: at 2048 1×64×64 it measured 10.46 µs once and 13.4–13.7 on three later machines against
     * cuBLAS's 11.8 ({@code results-h100-gemv-forms.txt}).
     */
    public static final int HALF_GEMV_AUTO_MAX_DIM = 64;
    /** Threads per block of bmm_gemv. */
    static final int GEMV_THREADS = 256;
    /** F16/BF16: AUTO's custom bound on max(m,n,k) (rule 3; 2048 48³ loses, 512 48³ wins). */
    public static final int HALF_CUSTOM_MAX_DIM = 48;
    /** F16/BF16: below this m·n·k the custom kernel wins at any measured batch (32³; rule 3). */
    public static final long HALF_CUSTOM_ANY_BATCH_VOLUME = 32L * 32 * 32;
    /** F16/BF16: largest batch at which 33..48 (volume above 32³) still goes custom (rule 3). */
    public static final long HALF_MID_BATCH_MAX = 1024;
    /** F32 rule 4d: from this batch on (the probe's smallest; 2048 and 8192 the same way). */
    public static final long F32_PAD_MIN_BATCH = 1024;
    /** F32 rule 4d: the largest m, n, k it takes (the probe's largest size; bmm_small itself goes to 128). */
    public static final int F32_PAD_MAX_DIM = 96;
    /** F32 rule 4d: the padding ratio needed at sqrt(m·n) = 48 ... */
    public static final double F32_PAD_RATIO_AT_48 = 1.35;
    /** ... less this much per 48 of sqrt(m·n) above it: the custom kernel's time per product gets closer to cuBLAS's as m·n grows. */
    public static final double F32_PAD_RATIO_SLOPE = 0.2;
    /** F32: AUTO's custom bound on max(m,n,k) (rule 4). */
    public static final int F32_CUSTOM_MAX_DIM = 48;
    /** F32 rule 4c: from this batch on, m, n and k all in (64, 96] go custom (8192 96³: vendor 575.6, custom 542.7). */
    public static final long F32_LARGE_BATCH_MIN = 8192;
    /** F32 rule 4c: the largest m, n, k it takes (128³ loses: 8192 940 / 1523). */
    public static final int F32_LARGE_BATCH_MAX_DIM = 96;
    /** F16/BF16 custom calls with m, n and k all at most this run bmm_frag. */
    public static final int FRAG_MAX_DIM = 16;
    /** bmm_frag gives each warp four matrices from this many warps per SM on (one below). */
    static final int FRAG_W4_MIN_WARPS_PER_SM = 32;
    /** Threads per block of bmm_frag (one matrix, or four, per warp; 128 and 256 within 4 % on H100). */
    static final int FRAG_THREADS = 128;
    /** F16/BF16 custom calls with max(m,n,k) above {@link #FRAG_MAX_DIM} and at most this run bmm_frag32. */
    public static final int FRAG32_MAX_DIM = 32;
    /**
     * bmm_frag32 gives each matrix four warps while the batch is at most this many matrices per SM, else two (H100
     * harness, f16 32³, w1 / w2 / w4 at 128 threads: batch 512 6.24 / 5.79 / 5.31; 2048 9.22 / 8.16 / 9.38; 8192 21.44 /
     * 19.26 / 24.77).
     */
    public static final int FRAG32_W4_MAX_MATS_PER_SM = 8;
    /** Threads per block of bmm_frag32 (64 and 128 within 1 % on every 32³ row but one: 8192 w2 t64 19.14, t128 19.26). */
    static final int FRAG32_THREADS = 128;
    /**
     * F16/BF16 forced CUSTOM: bmm_team (rather than bmm_small) for 32 < max(m,n,k) ≤ 128 with m·n·k above 32³, at batch
     * ≥ {@link #TEAM_MIN_BATCH}, and at any batch above this max(m,n,k) (H100 harness at 4de5ecd, f16 team / small µs:
     * 512 128³ 26.40 / 35.42, but 512 48³ 8.00 / 7.68).
     */
    public static final int HALF_TEAM_ANY_BATCH_MIN_DIM_EXCLUSIVE = 96;
    /**
     * F16/BF16 mid sizes with 4 warp tiles and m, n and k all at most this take two-warp teams (each warp two tiles)
     * from {@link #HALF_TEAM_W2_MIN_MATS_PER_SM} matrices per SM on, else four (below).
     */
    public static final int HALF_TEAM_W2_MAX_DIM = 48;
    /**
     * Matrices per SM from which {@link #HALF_TEAM_W2_MAX_DIM}'s shapes take two-warp teams. H100 harness, f16 w2 / w4
     * µs: 998b26e ({@code results-h100-998b26e-u4.txt}) 40³ at 8192 38.34 / 41.50, 48³ at 8192 44.38 / 46.88, 48³ at 2048
     * 15.71 / 14.91; e4b8c63 48³ at 4096 23.55 / 24.42. With 132 SMs, 2048 is 15.5 matrices per SM and 4096 is 31; the
     * threshold sits between. Larger u = 4 shapes keep four (998b26e, 8192: 56³ 64.80 / 60.83, 40×48×56 55.20 / 47.84,
     * 48×64×48 55.46 / 52.26, 64×48×64 66.91 / 63.36; 64³ at 4096 39.01 / 36.38).
     */
    public static final int HALF_TEAM_W2_MIN_MATS_PER_SM = 24;
    /**
     * bmm_team8 (F16/BF16 rows in 8-byte, not 16-byte, multiples) runs for forced CUSTOM from this batch on, and at any
     * batch above {@link #HALF_TEAM_ANY_BATCH_MIN_DIM_EXCLUSIVE} (H100 harness at 0790f2f,
     * {@code cuda-native/dev/bmm/results-h100-0790f2f-team8.txt}, f16 team8 / bmm_small µs: 512 60³ 10.14 / 10.88,
     * 76³ 14.34 / 16.42, 92³ 17.95 / 22.21, 100³ 24.10 / 27.30).
     */
    public static final int TEAM8_MIN_BATCH = 512;
    /**
     * AUTO runs bmm_team8 on F16/BF16 rows in 8-byte (not 16-byte) multiples with at most this many 32×32 warp tiles
     * (u = ceil(m/32)·ceil(n/32)) from {@link #TEAM8_AUTO_MIN_BATCH} on; at u = 16 cuBLAS is as fast or faster (same run,
     * f16 cuBLAS / team8 µs: 2048 100³ 77.60 / 78.72, 124³ 86.05 / 93.89, 8192 100³ 252.16 / 285.06).
     */
    public static final int TEAM8_AUTO_MAX_WARP_TILES = 9;
    /**
     * AUTO's bmm_team8 rule ({@link #TEAM8_AUTO_MAX_WARP_TILES}) starts at this batch: measured wins at 2048, 4096 and
     * 8192 on every u ≤ 9 shape; at 512 narrower (f16 cuBLAS / team8 µs: 60³ 10.18 / 10.14, 76³ 18.08 / 14.34, 92³ 19.30
     * / 17.95) and on three shapes only.
     */
    public static final int TEAM8_AUTO_MIN_BATCH = 2048;
    /**
     * bmm_wg (wgmma, sm_90a SASS only) runs where the output has at least this many 32×32 warp tiles (u =
     * ceil(m/32)·ceil(n/32)). H100 harness ({@code cuda-native/dev/bmm/results-h100-wg.txt}, f16, best team kernel / bmm_wg
     * µs at batch 2048): u = 9 68³ 37.15 / 29.44, 76³ 38.59 / 31.78, 96³ 45.02 / 42.02; u = 16 100³ 71.62 / 46.66, 124³
     * 94.50 / 74.18, 128³ 82.11 / 81.41 (8192: 296.61 / 297.09, a tie); but u = 4 64³ 19.42 / 26.40, 60³ 21.28 / 24.77,
     * 48³ 14.85 / 18.98 (one matrix per block at a time leaves too few bytes in flight there). With 16-byte rows the team
     * kernel also keeps u = 6 to 8 ({@link #WG_EIGHT_BYTE_MIN_WARP_TILES} has the measurements; 8-byte rows differ).
     */
    public static final int WG_MIN_WARP_TILES = 9;
    /**
     * Rows in 8-byte but not 16-byte multiples take bmm_wg from this many warp tiles (bmm_team8, the alternative there,
     * copies 8-byte chunks). H100 harness ({@code results-h100-wg-u5to8.txt}), f16 at 2048, bmm_team8 / bmm_wg µs, u = 8:
     * 124×36×60 30.85 / 29.54 (at 512: 12.22 / 11.52), 100×36×100 35.90 / 34.98, 36×124×100 38.27 / 34.62, 100×60×40 27.20 /
     * 25.73; with 16-byte rows the team kernel stays ahead below 9 (u = 8 128×64×64 30.11 / 37.47, u = 6 96×64×64 26.78 /
     * 32.80, 64×96×64 26.88 / 27.39, 72×40×120 30.72 / 33.38). With m, n ≤ 128, u is 1, 2, 3, 4, 6, 8, 9, 12 or 16. At u = 6
     * ({@code results-h100-c9031cc-u6.txt}, f16, the plan's bmm_team8 w8 g1 s2 / bmm_wg µs) bmm_wg wins every shape: at 2048
     * 76×60×36 26.50 / 24.19, 60×76×44 26.94 / 22.53, 92×52×100 38.21 / 36.00, 52×92×60 30.11 / 26.30; 76×60×36 at 512 11.04
     * / 9.63 and at 8192 86.18 / 77.57 (bf16 the same within 1 %). At u = 4 bmm_team8 stays ahead (60³ 21.28 / 24.77).
     */
    public static final int WG_EIGHT_BYTE_MIN_WARP_TILES = 6;
    /**
     * AUTO runs bmm_wg on rows in 8-byte (not 16-byte) multiples from this batch on (rule 3c): the smallest batch measured,
     * where it still led cuBLAS (f16 512 100³: 20.74 against 16.00 µs; bf16 20.70 / 16.03).
     */
    public static final long WG_AUTO_MIN_BATCH = 512;
    /** The compute capability whose SASS holds bmm_wg's body (sm_90a); the file's sm_80 and PTX images trap. */
    static final int WG_CC = 90;
    /** Blocks per SM bmm_wg is built for ({@code __launch_bounds__(256, 2)}, 109 registers). */
    static final int WG_MAX_BLOCKS_PER_SM = 2;
    /** Threads per block of bmm_wg: two warpgroups. */
    static final int WG_THREADS = 256;
    /** Shared memory a block may use when it holds more than one matrix (keeps several blocks per SM). */
    static final int MULTI_MATRIX_SMEM_BUDGET = 48 * 1024;

    private BmmHeuristics() {}

    /**
     * Launch plan of the custom kernel {@code bmm/bmm_small}.
     *
     * @param mats      matrices per thread block (G)
     * @param threads   threads per block (a multiple of 32, at most 256)
     * @param grid      blocks: ceil(batch / mats)
     * @param smemBytes dynamic shared memory per block
     */
    public record Plan(int mats, int threads, int grid, int smemBytes) {}

    /**
     * Launch plan of {@code bmm/bmm_team}: teams of {@code teamWarps} warps, {@code teamsPerBlock} per
     * block, each streaming groups of {@code mats} matrices through {@code stages} shared-memory stages;
     * C staged in shared memory or, {@code directC}, stored from registers.
     *
     * @param grid      persistent blocks: as many as stay resident, balanced so every team walks the same number of groups
     * @param smemBytes dynamic shared memory per block
     */
    public record TeamPlan(int mats, int teamWarps, int teamsPerBlock, int stages, boolean directC, int threads, int grid, int smemBytes) {}

    /**
     * Launch plan of {@code bmm/bmm_frag}: {@code matsPerWarp} consecutive matrices per warp (all their loads in flight
     * before the first mma), {@code threads} per block, a grid that covers the batch once.
     */
    public record FragPlan(int matsPerWarp, int threads, int grid) {}

    /**
     * Launch plan of {@code bmm/bmm_frag}'s {@code bmm_frag32_*}: {@code warpsPerMatrix} warps share one 32×32 output
     * (1: one warp; 2: 16 rows each; 4: 16×16 each), {@code threads} per block, a grid that covers the batch once.
     */
    public record Frag32Plan(int warpsPerMatrix, int threads, int grid) {}

    /**
     * Launch plan of {@code bmm/bmm_wg}: {@link #WG_THREADS} threads per block, each block one matrix at a time over a
     * persistent grid of {@code grid} blocks; dynamic shared memory 1024 (alignment) + two 32 KiB tiles + the flat
     * operands (2·(m·k + k·n) bytes).
     */
    public record WgPlan(int threads, int grid, int smemBytes) {}

    /**
     * Launch plan of {@code bmm/bmm_gemv} (m = 1 or n = 1): the matrix operand M (A when n = 1, else B) with
     * {@code rows} outputs per matrix and the vector v (the other operand). {@code kind}: {@code dot_lane} (M stored with
     * k contiguous; one thread per output), {@code axpy_lane} (M stored with the outputs contiguous; one thread per 16
     * bytes of outputs) or {@code axpy_warp} (F16/BF16 where a row of M is 1, 2, 4, 8, 16 or 32 chunks of 16 bytes: one
     * warp per matrix, {@code log2Chunks} = log2 of those chunks). Batch strides in elements, 0 for a shared operand.
     */
    public record GemvPlan(String kind, boolean matrixIsA, int rows, int log2Chunks, long matrixStride, long vectorStride,
                           int threads, int grid) {}

    /** Null if the custom kernels take the problem, otherwise why not. */
    public static String customUnsupportedReason(BmmShape s, DeviceInfo info) {
        if (s.m() > CUSTOM_MAX_DIM || s.n() > CUSTOM_MAX_DIM || s.k() > CUSTOM_MAX_DIM) {
            return "custom kernels take m, n, k <= " + CUSTOM_MAX_DIM + ", got m=" + s.m() + " n=" + s.n() + " k=" + s.k();
        }
        if (s.batch() > Integer.MAX_VALUE - CUSTOM_BATCH_MARGIN) {
            return "custom kernels take batch <= 2^31 - 1 - " + CUSTOM_BATCH_MARGIN + " (32-bit matrix indices), got " + s.batch();
        }
        if (info.cc() < 80) {
            return "custom kernels need sm_80 or newer (mma.sync, cp.async), device is sm_" + info.cc();
        }
        if (plan(s, info).smemBytes() > info.smemPerBlockOptin()) {
            return "needs " + plan(s, info).smemBytes() + " B of shared memory per block, device allows " + info.smemPerBlockOptin();
        }
        return null;
    }

    /** The backend and variant AUTO uses for {@code s} with 16-byte aligned tensors. */
    public static Decision decide(BmmShape s, DeviceInfo info) {
        return decide(s, info, true);
    }

    /**
     * The backend and variant AUTO uses for {@code s}; {@code aligned16}: A, B and C all start on 16
     * bytes (bmm_team needs it; unaligned views run bmm_small, or the vendor where only the team wins).
     */
    public static Decision decide(BmmShape s, DeviceInfo info, boolean aligned16) {
        return decide(s, info, aligned16 ? 16 : 0);
    }

    /**
     * The backend and variant AUTO uses for {@code s}; {@code align}: the largest of 16 and 8 that A, B and C all
     * start on (0 for neither): bmm_team needs 16, bmm_team8 8.
     */
    public static Decision decide(BmmShape s, DeviceInfo info, int align) {
        boolean aligned16 = align >= 16;
        String unsupported = customUnsupportedReason(s, info);
        if (unsupported != null) {
            return vendor(s, unsupported);
        }
        if (s.sharedB() && !s.transA() && !useFrag(s)) {
            return vendor(s, "shared B folds the batch into one GEMM with m' = batch*m = " + s.batch() * s.m()
                    + " rows (measured f16 2048 64^3 shared: vendor 16.6 us, custom 33.1 us)");
        }
        long maxDim = Math.max(s.m(), Math.max(s.n(), s.k()));
        long volume = s.m() * s.n() * s.k();
        if (s.dtype() != DType.F32 && !s.transA() && !s.transB() && s.n() == 1 && maxDim <= HALF_GEMV_AUTO_MAX_DIM
                && useGemv(s, info, align)) {
            return custom(s, info, "n=1 with max(m,n,k) <= " + HALF_GEMV_AUTO_MAX_DIM + ": bmm_gemv streams the matrix once "
                    + "(harness f16 2048 64x1x64: vendor 12.03 us, gemv 11.52; 32x1x32 11.74 / 6.02; 512 64x1x64 7.33 / 6.21)", align);
        }
        if (s.dtype() == DType.F32) {
            if (s.transA() || s.transB()) {
                return vendor(s, "F32 with a transposed operand: the FFMA kernel's transposed reads conflict in shared memory "
                        + "(measured f32 2048 32^3 A^T B^T: vendor 18.8 us, custom 24.9 us)");
            }
            if (useFrag(s)) {
                return custom(s, info, "F32 with m, n, k <= " + FRAG_MAX_DIM + ": bmm_frag (measured f32 2048 16^3: vendor 11.14 us, frag "
                        + "5.89 us; 8192 8^3: 35.81 / 5.76; 2048 16^3 shared B: 8.16 / 5.54)", aligned16);
            }
            if (aligned16 && s.m() == 1 && maxDim <= F32_ROW_TEAM_MAX_DIM && useTeam(s, info)) {
                return custom(s, info, "F32 with m=1, n, k <= " + F32_ROW_TEAM_MAX_DIM + ", batch " + s.batch()
                        + " (measured f32 2048 1x64x64: vendor 21.73 us, team 17.89 us, small 28.48 us; gemv, which runs where it"
                        + " takes the tensors, 17.66 in its harness)", true);
            }
            long minDim = Math.min(s.m(), Math.min(s.n(), s.k()));
            if (s.batch() >= F32_LARGE_BATCH_MIN && minDim > 64 && maxDim <= F32_LARGE_BATCH_MAX_DIM) {
                return custom(s, info, "F32 at batch " + s.batch() + " >= " + F32_LARGE_BATCH_MIN + " with 64 < m, n, k <= "
                        + F32_LARGE_BATCH_MAX_DIM + " (measured f32 8192 96^3: vendor 575.6 us, custom 542.7 us)", aligned16);
            }
            if (f32PaddingFavoursCustom(s)) {
                // a plain concatenation like the other rules: decide runs on every call, String.format costs a parse per call
                return custom(s, info, "F32 at batch " + s.batch() + " with 32 < m, n, k and max(m,n,k) <= " + F32_PAD_MAX_DIM
                        + ": cuBLAS's rounding of m and n up to 32 outweighs the custom kernel (rule 4d; measured f32 2048 76^3: "
                        + "vendor 122.0 us, custom 90.4; 2048 84^3: 137.0 / 109.1)", aligned16);
            }
            if (maxDim > F32_CUSTOM_MAX_DIM) {
                return vendor(s, "F32 with max(m,n,k)=" + maxDim + " > " + F32_CUSTOM_MAX_DIM
                        + " (measured f32 2048 64^3: vendor 52.4 us, custom 55.2 us)");
            }
            return custom(s, info, "F32 with max(m,n,k)=" + maxDim + " <= " + F32_CUSTOM_MAX_DIM
                    + " (measured f32 8192 48^3: vendor 134.3 us, custom 104.6 us)", aligned16);
        }
        if (maxDim <= HALF_CUSTOM_MAX_DIM && volume <= HALF_CUSTOM_ANY_BATCH_VOLUME) {
            return custom(s, info, "m*n*k=" + volume + " <= 32^3 with max(m,n,k) <= " + HALF_CUSTOM_MAX_DIM
                    + " (measured f16 8192 16^3: vendor 30.4 us, custom 11.4 us; 2048 17x33x9: 17.6 / 10.8)", align);
        }
        if (!teamTakes(s) && s.batch() >= WG_AUTO_MIN_BATCH && useWg(s, info, align)) {
            return custom(s, info, "rows in 8-byte, not 16-byte, multiples with " + warpTiles(s) + " >= " + WG_EIGHT_BYTE_MIN_WARP_TILES
                    + " warp tiles at batch " + s.batch() + " on sm_90: bmm_wg (measured f16 2048 100^3: vendor 76.13 us, wg 46.66; "
                    + "512 100^3 20.74 / 16.00; 8192 100^3 253.41 / 176.70; 2048 76^3 67.07 / 31.78; u = 6: 2048 76x60x36 39.84 / 24.19)", align);
        }
        if (!teamTakes(s) && warpTiles(s) <= TEAM8_AUTO_MAX_WARP_TILES && s.batch() >= TEAM8_AUTO_MIN_BATCH && useTeam8(s, info, align)) {
            return custom(s, info, "rows in 8-byte, not 16-byte, multiples with " + warpTiles(s) + " <= " + TEAM8_AUTO_MAX_WARP_TILES
                    + " warp tiles at batch " + s.batch() + ": bmm_team8 (measured f16 2048 60^3: vendor 30.78 us, team8 20.99; "
                    + "76^3 67.10 / 38.62; 8192 60^3 110.14 / 67.07; 8192 92^3 222.02 / 189.54)", align);
        }
        if (maxDim <= HALF_CUSTOM_MAX_DIM && s.batch() <= HALF_MID_BATCH_MAX) {
            return custom(s, info, "max(m,n,k)=" + maxDim + " <= " + HALF_CUSTOM_MAX_DIM + " at batch " + s.batch() + " <= "
                    + HALF_MID_BATCH_MAX + " (measured bf16 512 48^3: vendor 10.1 us, custom 8.6 us)", align);
        }
        return vendor(s, "max(m,n,k)=" + maxDim + ", m*n*k=" + volume + ", batch " + s.batch()
                + ": cuBLAS's tiles fill the GPU (measured f16 2048 64^3: vendor 24.5 us, custom 29.0 us; f16 512 64^3 at 4de5ecd: 8.70 / 9.50)");
    }

    /** The decision when the caller forces VENDOR. */
    public static Decision vendor(BmmShape s, String reason) {
        String variant = s.sharedB() && !s.transA() && s.batch() * s.m() <= Integer.MAX_VALUE ? "cublas_gemm_folded" : "cublas_strided_batched";
        if (s.dtype() == DType.F32) {
            variant += s.precision() == Bmm.Precision.TF32 ? "_tf32" : "_fp32";
        }
        return new Decision(Backend.VENDOR, variant, reason);
    }

    /** The decision when the custom kernel runs (forced or chosen), tensors 16-byte aligned. */
    public static Decision custom(BmmShape s, DeviceInfo info, String reason) {
        return custom(s, info, reason, true);
    }

    /**
     * The decision when the custom kernel runs: bmm_frag where {@link #useFrag}, else bmm_team where {@link #useTeam} and
     * aligned16, bmm_small otherwise.
     */
    public static Decision custom(BmmShape s, DeviceInfo info, String reason, boolean aligned16) {
        return custom(s, info, reason, aligned16 ? 16 : 0);
    }

    /**
     * As {@link #custom(BmmShape, DeviceInfo, String, boolean)}; {@code align}: the largest of 16 and 8 that A, B and C
     * all start on (0 for neither). bmm_wg runs where {@link #useWg} (before the team kernels), bmm_team8 where
     * {@link #useTeam8}.
     */
    public static Decision custom(BmmShape s, DeviceInfo info, String reason, int align) {
        boolean aligned16 = align >= 16;
        String kind = s.dtype() == DType.F32 ? "ffma" : "mma";
        if (useFrag(s)) {
            FragPlan f = fragPlan(s, info);
            String size = s.dtype() == DType.F32 ? (fragF32Small(s) ? "_s8" : "_s16") : "";
            return new Decision(Backend.CUSTOM, "frag_" + kind + size + "_w" + f.matsPerWarp() + "_t" + f.threads(), reason);
        }
        if (useGemv(s, info, align)) {
            GemvPlan g = gemvPlan(s);
            return new Decision(Backend.CUSTOM, "gemv_" + g.kind() + "_t" + g.threads(), reason);
        }
        if (useFrag32(s)) {
            Frag32Plan f = frag32Plan(s, info);
            return new Decision(Backend.CUSTOM, "frag32_" + kind + "_w" + f.warpsPerMatrix() + "_t" + f.threads(), reason);
        }
        if (useWg(s, info, align)) {
            return new Decision(Backend.CUSTOM, "wg_" + kind + "_t" + WG_THREADS, reason);
        }
        if (aligned16 && useTeam(s, info)) {
            TeamPlan t = teamPlan(s, info);
            return new Decision(Backend.CUSTOM, "team_" + kind + "_w" + t.teamWarps() + "_g" + t.mats() + "_s" + t.stages()
                    + (t.directC() ? "_dc" : "_sc"), reason);
        }
        if (useTeam8(s, info, align)) {
            TeamPlan t = teamPlan(s, info);
            return new Decision(Backend.CUSTOM, "team8_" + kind + "_w" + t.teamWarps() + "_g" + t.mats() + "_s" + t.stages()
                    + (t.directC() ? "_dc" : "_sc"), reason);
        }
        Plan p = plan(s, info);
        return new Decision(Backend.CUSTOM, "small_" + kind + "_g" + p.mats() + "_t" + p.threads(), reason);
    }

    /**
     * Whether the custom path runs bmm_gemv: m = 1 or n = 1 with {@link #FRAG_MAX_DIM} < max(m,n,k) ≤ {@link
     * #CUSTOM_MAX_DIM} (bmm_frag keeps the smaller ones), A, B and C on 16 bytes ({@code align} 16), and the matrix
     * operand's contiguous dimension a multiple of 16 bytes ({@link #gemvPlan}). Any layout, a shared B included. Checked
     * before bmm_frag32, bmm_wg and the team kernels.
     */
    public static boolean useGemv(BmmShape s, DeviceInfo info, int align) {
        if (align < 16 || (s.m() != 1 && s.n() != 1) || info.cc() < 80 || s.batch() > Integer.MAX_VALUE - CUSTOM_BATCH_MARGIN) {
            return false;
        }
        long maxDim = Math.max(s.m(), Math.max(s.n(), s.k()));
        if (maxDim <= FRAG_MAX_DIM || maxDim > CUSTOM_MAX_DIM) {
            return false;
        }
        return gemvContiguous(s) % (16 / s.dtype().bytes()) == 0;
    }

    /** bmm_gemv's matrix operand is stored with k contiguous (dot): A as stored with n = 1 (or m = n = 1), B transposed with m = 1. */
    static boolean gemvDot(BmmShape s) {
        return s.n() == 1 ? !s.transA() || s.m() == 1 : s.transB();
    }

    /** Outputs per matrix of bmm_gemv: m when n = 1, else n. */
    static long gemvRows(BmmShape s) {
        return s.n() == 1 ? s.m() : s.n();
    }

    /** Elements along the matrix operand's contiguous dimension: k (dot) or the outputs per matrix (axpy). */
    static long gemvContiguous(BmmShape s) {
        return gemvDot(s) ? s.k() : gemvRows(s);
    }

    /**
     * bmm_gemv's plan (see {@link GemvPlan}); {@link #useGemv} must hold. Example: F16 2048 1×64×64 (B as stored, axpy, 8
     * chunks of 16 bytes per row): {@code axpy_warp}, one warp per matrix, 256 blocks; F16 2048 64×1×64 (A as stored,
     * dot): {@code dot_lane}, one thread per row, 512 blocks.
     */
    public static GemvPlan gemvPlan(BmmShape s) {
        boolean aIsMatrix = s.n() == 1;
        boolean dot = gemvDot(s);
        long rows = gemvRows(s);
        int perChunk = 16 / s.dtype().bytes();
        long chunks = gemvContiguous(s) / perChunk;
        boolean warp = !dot && s.dtype() != DType.F32 && chunks <= 32 && Long.bitCount(chunks) == 1;
        long matrix = rows * s.k();
        long matrixStride = aIsMatrix || !s.sharedB() ? matrix : 0;
        long vectorStride = aIsMatrix && s.sharedB() ? 0 : s.k();
        long threads = warp ? s.batch() * 32 : s.batch() * (dot ? rows : rows / perChunk);
        String kind = (dot ? "dot" : "axpy") + (warp ? "_warp" : "_lane");
        return new GemvPlan(kind, aIsMatrix, (int) rows, warp ? Long.numberOfTrailingZeros(chunks) : 0, matrixStride, vectorStride,
                GEMV_THREADS, (int) Math.min(ceilDiv(threads, GEMV_THREADS), Integer.MAX_VALUE));
    }

    /**
     * Whether the custom path runs bmm_frag, for m, n, k ≤ {@link #FRAG_MAX_DIM}. F16/BF16: the stored rows of A, B
     * and C of even length, so each lane's pair is one 32-bit load (k or m for A, n or k for B, n for C). bmm_frag also
     * computes odd rows, with element loads, but there bmm_small is as fast or faster (9×15×7 batch 8192: frag 10.05
     * one matrix per warp, 12.77 four per warp, small 9.73 µs). F32 ({@code bmm_frag_f32_nn_*}): neither operand
     * transposed, any size and alignment; the H100 harness ({@code cuda-native/dev/bmm/results-h100-frag32.txt}) has it
     * ahead of bmm_small on every such row, odd ones included (9×15×7 batch 8192: 12.64 against 15.14 µs).
     */
    public static boolean useFrag(BmmShape s) {
        if (Math.max(s.m(), Math.max(s.n(), s.k())) > FRAG_MAX_DIM) {
            return false;
        }
        if (s.dtype() == DType.F32) {
            return !s.transA() && !s.transB();  // bmm_frag_f32 reads A and B as stored only; any size, any alignment
        }
        long aRow = s.transA() ? s.m() : s.k();
        long bRow = s.transB() ? s.k() : s.n();
        return aRow % 2 == 0 && bRow % 2 == 0 && s.n() % 2 == 0;
    }

    /**
     * Whether a {@code bmm_frag} or {@code bmm_frag32} launch takes its NN row-chunk entry ({@code bmm_frag_<dtype>_nn_rows},
     * {@code bmm_frag32_<dtype>_nn_rows_w<W>}) for a warp slice of {@code sliceColumns} output columns (16: bmm_frag and
     * bmm_frag32's four-warp plan; 32: its one- and two-warp plans): F16/BF16, neither operand transposed, n a multiple
     * of E = sliceColumns / 4 and above half the slice, and B and C on 2E bytes (the kernel moves B and C in E-element
     * row chunks; the harness {@code cuda-native/dev/bmm/frag_ab.cu} has the same rule as {@code rows_fit}). The same bits as the pair-load entries,
     * fewer memory instructions: H100 harness ({@code cuda-native/dev/bmm/results-h100-11cae10-frag-ab.txt}), F16 µs,
     * 16³ batch 8192 8.74 → 7.20, 32³ batch 2048 8.19 → 7.20; at 8³ (n not above half the slice) the chunks lose,
     * 4.16 → 4.32 at batch 512.
     */
    public static boolean fragRows(BmmShape s, int sliceColumns, long bAddress, long cAddress) {
        if (s.dtype() == DType.F32 || s.transA() || s.transB()) {
            return false;
        }
        int e = sliceColumns / 4;
        long chunkBytes = 2L * e;
        return s.n() % e == 0 && s.n() > sliceColumns / 2 && bAddress % chunkBytes == 0 && cAddress % chunkBytes == 0;
    }

    /** Output columns of one warp's slice in {@code bmm_frag32} with {@code warpsPerMatrix} warps (16 for four, else 32). */
    public static int frag32SliceColumns(int warpsPerMatrix) {
        return warpsPerMatrix == 4 ? 16 : 32;
    }

    /**
     * Whether the custom path runs bmm_frag32: F16/BF16 above {@link #FRAG_MAX_DIM} and up to {@link #FRAG32_MAX_DIM},
     * B per matrix, and the stored rows of even length as for {@link #useFrag} (odd rows would take element loads,
     * which lose to bmm_small at the smaller sizes). Takes any alignment.
     */
    public static boolean useFrag32(BmmShape s) {
        long maxDim = Math.max(s.m(), Math.max(s.n(), s.k()));
        if (s.dtype() == DType.F32 || s.sharedB() || maxDim <= FRAG_MAX_DIM || maxDim > FRAG32_MAX_DIM) {
            return false;
        }
        long aRow = s.transA() ? s.m() : s.k();
        long bRow = s.transB() ? s.k() : s.n();
        return aRow % 2 == 0 && bRow % 2 == 0 && s.n() % 2 == 0;
    }

    /**
     * bmm_frag32's plan: four warps per matrix while the batch is at most {@link #FRAG32_W4_MAX_MATS_PER_SM} matrices per
     * SM (more warps in flight where the GPU would be half empty), else two; {@link #FRAG32_THREADS} per block. Example,
     * 132 SMs: batch 512 → four warps per matrix, 512 blocks; batch 2048 → two, 1024 blocks.
     */
    public static Frag32Plan frag32Plan(BmmShape s, DeviceInfo info) {
        int w = s.batch() <= (long) FRAG32_W4_MAX_MATS_PER_SM * info.smCount() ? 4 : 2;
        long grid = ceilDiv(s.batch() * w, FRAG32_THREADS / 32);
        return new Frag32Plan(w, FRAG32_THREADS, (int) Math.min(grid, Integer.MAX_VALUE));
    }

    /**
     * bmm_frag's plan: one matrix per warp while the batch gives fewer than {@link #FRAG_W4_MIN_WARPS_PER_SM} warps per
     * SM, then four (more loads in flight per warp once the GPU is full). H100 at dcc8ffc, µs: 8³ batch 8192 (62 warps
     * per SM) 1 per warp 6.40, 2 per warp 6.24, 4 per warp 5.41; 16³ batch 8192 8.70 / 8.80 / 8.80; 16³ batch 2048
     * (16 warps per SM) 5.06 / 5.06 / 5.92. Example, 132 SMs: batch 2048 → 1 per warp, 512 blocks of 4 warps;
     * batch 8192 → 4 per warp, 512 blocks. F32 (its registers hold whole rows of A and columns of B): two per warp from
     * the same threshold where m, n, k ≤ 8, else one (H100 harness, {@code results-h100-frag32.txt}: 8³ batch 8192 5.76
     * two per warp against 5.95 one; 16³ batch 8192 12.74 one, 15.36 two), 128 threads.
     */
    public static FragPlan fragPlan(BmmShape s, DeviceInfo info) {
        long warpsPerSm = ceilDiv(s.batch(), info.smCount());
        int mpw = warpsPerSm >= FRAG_W4_MIN_WARPS_PER_SM ? 4 : 1;
        if (s.dtype() == DType.F32) {
            mpw = fragF32Small(s) && warpsPerSm >= FRAG_W4_MIN_WARPS_PER_SM ? 2 : 1;
        }
        long grid = ceilDiv(ceilDiv(s.batch(), mpw), FRAG_THREADS / 32);
        return new FragPlan(mpw, FRAG_THREADS, (int) Math.min(grid, Integer.MAX_VALUE));
    }

    /**
     * Rule 4d: F32, neither operand transposed, batch ≥ {@link #F32_PAD_MIN_BATCH}, m, n and k above 32 (the probe's
     * smallest k was 36), 48 < max(m,n,k) ≤
     * {@link #F32_PAD_MAX_DIM}, and cuBLAS's padding of m and n to multiples of 32 ({@link #f32PaddingRatio}) at least
     * {@link #f32PaddingThreshold}. cuBLAS's F32 time follows the padded m·n (2048: 64³ 47.9 µs, 68³ 111.7, 96³
     * 150.8), the custom kernel's the shape itself (51.9, 76.7, 148.3). {@code BmmF32Probe} at ba6fb7a (H100, 84
     * shapes, batch 1024/2048/8192, sizes 33–96; docs/ops/bmm.md): this threshold picks the faster path within 5 %
     * on 83 of them (the rule before it: 46), the miss 1024 44×44×96 (custom 33.5 µs against 29.7; at 2048 a tie, at
     * 8192 custom 1.18× faster). Below m, n = 33 the padding ratio says nothing (2048 64×1×64: vendor 19.5, custom 31.6).
     */
    static boolean f32PaddingFavoursCustom(BmmShape s) {
        long maxDim = Math.max(s.m(), Math.max(s.n(), s.k()));
        return s.dtype() == DType.F32 && !s.transA() && !s.transB() && s.batch() >= F32_PAD_MIN_BATCH
                && s.m() > 32 && s.n() > 32 && s.k() > 32 && maxDim > F32_CUSTOM_MAX_DIM && maxDim <= F32_PAD_MAX_DIM
                && f32PaddingRatio(s.m(), s.n()) >= f32PaddingThreshold(s.m(), s.n());
    }

    /** ceil32(m)·ceil32(n) / (m·n): how much of cuBLAS's tile work is padding. */
    static double f32PaddingRatio(long m, long n) {
        return (double) ((m + 31) / 32 * 32) * ((n + 31) / 32 * 32) / ((double) m * n);
    }

    /** The padding ratio rule 4d needs: {@link #F32_PAD_RATIO_AT_48} − {@link #F32_PAD_RATIO_SLOPE} · (sqrt(m·n) − 48) / 48. */
    static double f32PaddingThreshold(long m, long n) {
        return F32_PAD_RATIO_AT_48 - F32_PAD_RATIO_SLOPE * (Math.sqrt((double) m * n) - 48) / 48;
    }

    /** F32 bmm_frag's smaller variant ({@code s8}: m, n, k ≤ 8, one row and two columns per lane), else {@code s16}. */
    static boolean fragF32Small(BmmShape s) {
        return Math.max(s.m(), Math.max(s.n(), s.k())) <= 8;
    }

    /** bmm_team's layout needs: every stored row of A, B and C a multiple of 16 bytes, B per matrix. */
    static boolean teamTakes(BmmShape s) {
        int v = 16 / s.dtype().bytes();
        long aCols = s.transA() ? s.m() : s.k();
        long bCols = s.transB() ? s.k() : s.n();
        return !s.sharedB() && aCols % v == 0 && bCols % v == 0 && s.n() % v == 0;
    }

    /**
     * bmm_wg's layout needs: F16/BF16, m, n, k ≤ {@link #CUSTOM_MAX_DIM}, B per matrix, every stored row of A, B and C a
     * multiple of 8 bytes and each whole operand (m·k, k·n, m·n elements) a multiple of 16 bytes, so that every matrix's
     * operands are 16-byte chunks.
     */
    static boolean wgTakes(BmmShape s) {
        long aCols = s.transA() ? s.m() : s.k();
        long bCols = s.transB() ? s.k() : s.n();
        return s.dtype() != DType.F32 && !s.sharedB() && s.m() <= CUSTOM_MAX_DIM && s.n() <= CUSTOM_MAX_DIM && s.k() <= CUSTOM_MAX_DIM
                && aCols % 4 == 0 && bCols % 4 == 0 && s.n() % 4 == 0
                && (s.m() * s.k()) % 8 == 0 && (s.k() * s.n()) % 8 == 0 && (s.m() * s.n()) % 8 == 0;
    }

    /**
     * Whether the custom path runs bmm_wg: compute capability {@link #WG_CC} (the kernel's only real image is sm_90a SASS),
     * A, B and C on 16 bytes, {@link #wgTakes}, at least {@link #WG_MIN_WARP_TILES} warp tiles ({@link
     * #WG_EIGHT_BYTE_MIN_WARP_TILES} where the rows are not all 16-byte multiples), and its plan's shared memory within a
     * block's.
     */
    public static boolean useWg(BmmShape s, DeviceInfo info, int align) {
        return align >= 16 && info.cc() == WG_CC && s.batch() <= Integer.MAX_VALUE && wgTakes(s)
                && warpTiles(s) >= (teamTakes(s) ? WG_MIN_WARP_TILES : WG_EIGHT_BYTE_MIN_WARP_TILES)
                && wgPlan(s, info).smemBytes() <= info.smemPerBlockOptin();
    }

    /**
     * bmm_wg's plan: as many blocks as stay resident (shared memory, and at most {@link #WG_MAX_BLOCKS_PER_SM} per SM), at
     * most one per matrix. Example: 100³ F16 on an H100: 1024 + 65536 + 40000 = 106560 bytes, two blocks per SM, 264 blocks.
     */
    public static WgPlan wgPlan(BmmShape s, DeviceInfo info) {
        long smem = 1024 + 2 * 32768 + 2 * (s.m() * s.k() + s.k() * s.n());
        long perSm = Math.max(1, Math.min(WG_MAX_BLOCKS_PER_SM, info.smemPerSm() / (smem + 1024)));
        long grid = Math.max(1, Math.min(s.batch(), perSm * info.smCount()));
        return new WgPlan(WG_THREADS, (int) Math.min(grid, Integer.MAX_VALUE), (int) Math.min(smem, Integer.MAX_VALUE));
    }

    /** bmm_team8's layout needs: F16/BF16, every stored row of A, B and C a multiple of 8 bytes, B per matrix. */
    static boolean team8Takes(BmmShape s) {
        long aCols = s.transA() ? s.m() : s.k();
        long bCols = s.transB() ? s.k() : s.n();
        return s.dtype() != DType.F32 && !s.sharedB() && aCols % 4 == 0 && bCols % 4 == 0 && s.n() % 4 == 0;
    }

    /** The count u = ceil(m/32)·ceil(n/32) of 32×32 output tiles of one matrix (the F16/BF16 team kernels' warp tiles). */
    static long warpTiles(BmmShape s) {
        return ceilDiv(s.m(), 32) * ceilDiv(s.n(), 32);
    }

    /**
     * Whether the custom path runs bmm_team8 (bmm_team with 8-byte copies) for F16/BF16: where bmm_team does not run
     * because the stored rows are multiples of 8 bytes but not all of 16 ({@link #team8Takes}; then from
     * {@link #TEAM8_MIN_BATCH}, or at any batch above {@link #HALF_TEAM_ANY_BATCH_MIN_DIM_EXCLUSIVE}), or because A, B and
     * C start on 8 bytes but not 16 ({@code align} = 8; then where {@link #halfMidTeam} holds); in both cases for
     * 32 < max(m,n,k) ≤ 128 with m·n·k above 32³, in {@link #teamPlan}'s plan, whose shared memory must fit a block.
     */
    public static boolean useTeam8(BmmShape s, DeviceInfo info, int align) {
        if (align < 8 || !team8Takes(s) || info.cc() < 80 || s.batch() > Integer.MAX_VALUE) {
            return false;
        }
        boolean rows16 = teamTakes(s);
        if (rows16 && align >= 16) {
            return false;  // bmm_team
        }
        long maxDim = Math.max(s.m(), Math.max(s.n(), s.k()));
        boolean wanted = rows16 ? halfMidTeam(s)
                : maxDim > FRAG32_MAX_DIM && maxDim <= CUSTOM_MAX_DIM && s.m() * s.n() * s.k() > HALF_CUSTOM_ANY_BATCH_VOLUME
                        && (s.batch() >= TEAM8_MIN_BATCH || maxDim > HALF_TEAM_ANY_BATCH_MIN_DIM_EXCLUSIVE);
        return wanted && teamPlan(s, info).smemBytes() <= info.smemPerBlockOptin();
    }

    /**
     * Whether the custom path runs bmm_team rather than bmm_small (16-byte aligned tensors assumed).
     * <p>F16/BF16 ({@link #halfMidTeam}): only above 32, where bmm_frag32 does not reach, with m·n·k above 32³; AUTO
     * never reaches these shapes (it sends them to cuBLAS, faster on every measured row), so this is the forced CUSTOM
     * path. H100 harness at 4de5ecd ({@code cuda-native/dev/bmm/results-h100-4de5ecd.txt}), f16, {@link #teamPlan}'s
     * configuration / bmm_small µs: 2048 48³ 16.29 / 17.02, 64³ 22.18 / 24.90, 96³ 52.96 / 53.22, 128³ 81.44 / 100.13;
     * 8192 48³ 46.66 / 53.06, 64³ 73.79 / 84.00, 96³ 184.93 / 190.50, 128³ 290.21 / 359.01; 2048 32×128×64 23.36 / 26.85.
     * Below 32 (bmm_frag32's range since 5fe6b76) F16/BF16 never take it: "team / small" there was f16 2048 32³ 8.90 /
     * 9.09, 8192 32³ 19.68 / 23.20, and bmm_frag32 is faster than both.
     * <p>F32 from batch 2048 with 16 < max ≤ 48 (2048 32³ 13.73 / 15.52, 8192 32³ 38.40 / 40.99, 8192 48³ 94.30 /
     * 98.82, 2048 48³ 29.18 / 29.54, 2048 32³ Aᵀ·Bᵀ 18.62 / 21.73) or m = 1 with n, k ≤ 64 (2048 1×64×64 17.89 / 28.48).
     * <p>Either way the plan's shared memory must fit a block ({@code smemPerBlockOptin}; on an A100 the 128³ plan does
     * not, and bmm_small runs).
     */
    public static boolean useTeam(BmmShape s, DeviceInfo info) {
        if (!teamTakes(s) || info.cc() < 80 || s.batch() > Integer.MAX_VALUE) {
            return false;
        }
        long maxDim = Math.max(s.m(), Math.max(s.n(), s.k()));
        boolean wanted = s.dtype() == DType.F32
                ? s.batch() >= TEAM_MIN_BATCH
                        && ((maxDim > TEAM_MIN_DIM_EXCLUSIVE && maxDim <= F32_TEAM_MAX_DIM) || (s.m() == 1 && maxDim <= F32_ROW_TEAM_MAX_DIM))
                : halfMidTeam(s);
        return wanted && teamPlan(s, info).smemBytes() <= info.smemPerBlockOptin();
    }

    /**
     * F16/BF16 shapes for bmm_team: 32 < max(m,n,k) ≤ {@link #CUSTOM_MAX_DIM}, m·n·k above 32³ (so none of AUTO's
     * custom rules for half types), batch ≥ {@link #TEAM_MIN_BATCH} or max(m,n,k) above
     * {@link #HALF_TEAM_ANY_BATCH_MIN_DIM_EXCLUSIVE}. Layout and alignment are {@link #teamTakes}' and the caller's.
     */
    static boolean halfMidTeam(BmmShape s) {
        long maxDim = Math.max(s.m(), Math.max(s.n(), s.k()));
        return s.dtype() != DType.F32 && maxDim > FRAG32_MAX_DIM && maxDim <= CUSTOM_MAX_DIM
                && s.m() * s.n() * s.k() > HALF_CUSTOM_ANY_BATCH_VOLUME
                && (s.batch() >= TEAM_MIN_BATCH || maxDim > HALF_TEAM_ANY_BATCH_MIN_DIM_EXCLUSIVE);
    }

    /**
     * bmm_team's plan (mirrored by {@code team_plan} in {@code cuda-native/dev/bmm/bench_bmm.cu}). A group
     * holds enough matrices to move about 4 KiB (at most 16); a team has one warp per 4 of its 32x32
     * tiles (F16/BF16) or per 64 of its 4x4 thread tiles (F32), 1 to 4; 2 stages (8192 32³ f16: 2 stages
     * 19.68 µs, 3 stages 21.66: the third stage costs more warps per SM than it hides); F32 stores C from
     * registers (float4; f32 8192 32³ 38.40 direct vs 39.33 staged), F16/BF16 through shared memory with
     * 16-byte stores (f16 8192 32³ 19.68 staged vs 24.54 direct). Up to 4 teams (8 warps) per block;
     * grid: the blocks that stay resident (shared memory, threads, 128 registers per thread), balanced.
     * Example: F16 8192 at 32³ on an H100: 6 KiB moved per matrix → 1 matrix per group, 1 warp, teams of
     * 12,800 B (two stages of A and B padded to 32 x 40 halves, one C slot), 4 per block (128 threads,
     * 51,200 B), 4 blocks per SM → 2112 teams, 4 groups each → 512 blocks.
     * <p>F16/BF16 above 32 ({@link #halfMidTeam}) take the configurations that measured fastest in the H100 harness,
     * with u = ceil(m/32)·ceil(n/32) warp tiles: teams of u warps up to u = 4, 8 warps above, always 2 stages; at u = 4
     * with m, n, k ≤ {@link #HALF_TEAM_W2_MAX_DIM} two warps from {@link #HALF_TEAM_W2_MIN_MATS_PER_SM} matrices per SM. Widths
     * from runs 4de5ecd (48³ and 64³ at 2048: w4 with 3 stages 16.29 / 22.18 µs against the rule above's w1 17.76 /
     * 28.80; 128³: w8 s2 81.44 against w4 s2 123.01), ab53e1c ({@code results-h100-ab53e1c-mid96.txt}; 96³, u = 9: w8 s2 44.67 against
     * w4 s2 53.50 at 2048, 171.58 against 181.89 at 8192; 4de5ecd had tried w8 with 3 stages only) and e4b8c63
     * ({@code results-h100-e4b8c63-u5to9.txt}; at 2048, u = 6: 64×96×64 w8 27.07 against w4 32.58; u = 8: 128×64×64
     * 31.58 against 35.46, 64×128×96 40.03 against 43.30; with m, n ≤ 128 there is no u = 5 or 7). Stages from
     * run f673558 ({@code cuda-native/dev/bmm/results-h100-f673558-mid.txt}), where 2 beat 3 at the same width on all
     * 18 rows, u = 1 to 4: 2048 32×32×128 w1 17.92 against 21.98 µs, 2048 48×32×128 w2 21.18 against 24.93, 2048 64³
     * w4 19.10 against 21.95, 2048 40×56×72 w4 18.18 against 23.39 (4de5ecd's 3-stage 4-warp teams had been compared
     * with narrower 2-stage teams only). Example: F16 2048 at 128³ on an H100: teams of 8 warps, 174,080 B (two stages of A and B
     * padded to 128 x 136 halves, one C slot), one per block, one block per SM → 132 teams, 16 groups each → 128 blocks.
     */
    public static TeamPlan teamPlan(BmmShape s, DeviceInfo info) {
        boolean f32 = s.dtype() == DType.F32;
        int bytes = s.dtype().bytes();
        long aBytes = operandElements(s.dtype(), s.transA() ? s.k() : s.m(), s.transA() ? s.m() : s.k()) * bytes;
        long bBytes = operandElements(s.dtype(), s.transB() ? s.n() : s.k(), s.transB() ? s.k() : s.n()) * bytes;
        long cBytes = operandElements(s.dtype(), s.m(), s.n()) * bytes;
        long moved = (s.m() * s.k() + s.k() * s.n() + s.m() * s.n()) * bytes;
        long nm = Math.min(Math.max(1, Math.min(16, 4096 / moved)), Math.max(1, s.batch()));
        long units = f32 ? ceilDiv(s.m(), 4) * ceilDiv(s.n(), 4) : ceilDiv(s.m(), 32) * ceilDiv(s.n(), 32);
        boolean mid = !f32 && Math.max(s.m(), Math.max(s.n(), s.k())) > FRAG32_MAX_DIM;
        int w = (int) (f32 ? Math.min(4, Math.max(1, ceilDiv(nm * units, 64)))
                : mid ? (units > 4 ? 8 : Math.min(4, units)) : Math.min(4, Math.max(1, nm * units / 4)));
        if (mid && units == 4 && Math.max(s.m(), Math.max(s.n(), s.k())) <= HALF_TEAM_W2_MAX_DIM
                && s.batch() >= (long) HALF_TEAM_W2_MIN_MATS_PER_SM * info.smCount()) {
            w = 2;
        }
        int stages = 2;
        boolean direct = f32;
        long team = stages * nm * (aBytes + bBytes) + (direct ? 0 : nm * cBytes);
        int tpb = Math.max(1, Math.min(4, 8 / w));
        while (tpb > 1 && tpb * team > info.smemPerBlockOptin()) {
            tpb--;
        }
        int threads = tpb * w * 32;
        long smem = tpb * team;
        long maxThreadsPerSm = info.cc() == 80 || info.cc() == 90 ? 2048 : 1536;
        long perSm = Math.min(info.smemPerSm() / (smem + 1024), Math.min(maxThreadsPerSm / threads, 65536L / ((long) threads * TEAM_MAX_REGISTERS)));
        perSm = Math.max(1, Math.min(32, perSm));
        long groups = ceilDiv(Math.max(1, s.batch()), nm);
        long iters = ceilDiv(groups, perSm * info.smCount() * tpb);
        long grid = ceilDiv(ceilDiv(groups, iters), tpb);
        return new TeamPlan((int) nm, w, tpb, stages, direct, threads, (int) Math.min(grid, Integer.MAX_VALUE),
                (int) Math.min(smem, Integer.MAX_VALUE));
    }

    /**
     * Matrices per block, threads and shared memory of the custom kernel (mirrors the layout in
     * {@code bmm_small.cu}). Work units: 16x16 output tiles per warp (F16/BF16) or 4x4 tiles per
     * thread (F32). A block gathers matrices until it has 16 warp tiles (2 per warp of 8) or 512
     * thread tiles, within 48 KiB, but never so many that fewer than 2 blocks per SM remain.
     * Example: F16 batch 2048 at 16³ on 132 SMs: 1 tile per matrix, 16 wanted, 2048 / 264 = 7 allowed
     * → 7 matrices per block, 7 warps, 293 blocks.
     */
    public static Plan plan(BmmShape s, DeviceInfo info) {
        boolean f32 = s.dtype() == DType.F32;
        long aBytes = operandElements(s.dtype(), s.transA() ? s.k() : s.m(), s.transA() ? s.m() : s.k()) * s.dtype().bytes();
        long bBytes = operandElements(s.dtype(), s.transB() ? s.n() : s.k(), s.transB() ? s.k() : s.n()) * s.dtype().bytes();
        long units = f32 ? ceilDiv(s.m(), 4) * ceilDiv(s.n(), 4) : ceilDiv(s.m(), 16) * ceilDiv(s.n(), 16);
        long target = f32 ? 512 : 16;
        long g = Math.max(1, target / units);
        g = Math.min(g, Math.max(1, s.batch() / (2L * info.smCount())));
        while (g > 1 && g * aBytes + (s.sharedB() ? 1 : g) * bBytes > MULTI_MATRIX_SMEM_BUDGET) {
            g--;
        }
        long work = g * units;
        int threads = f32 ? (int) Math.min(256, Math.max(32, ceilDiv(work, 32) * 32)) : (int) (32 * Math.min(8, work));
        long grid = ceilDiv(s.batch(), g);
        long smem = g * aBytes + (s.sharedB() ? 1 : g) * bBytes;
        return new Plan((int) g, threads, (int) Math.min(grid, Integer.MAX_VALUE), (int) Math.min(smem, Integer.MAX_VALUE));
    }

    /** Shared-memory elements of one operand stored [rows][cols]: padded to the tile, odd count of 16-byte chunks per row. */
    static long operandElements(DType dt, long rows, long cols) {
        int p = dt == DType.F32 ? 4 : 16;
        int v = 16 / dt.bytes();
        long rp = ceilDiv(rows, p) * p;
        long cp = ceilDiv(cols, p) * p;
        long stride = cp + ((cp / v) % 2 == 0 ? v : 0);
        return rp * stride;
    }

    private static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }
}
