package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.UnsupportedShapeException;

/**
 * Dispatch and launch plan of {@link Int8Mm}: pure functions of the shape and the queried
 * {@link DeviceInfo}, unit-tested on the CPU.
 *
 * <p>The split-K plan comes from the first H100 run of {@code cuda-native/dev/int8_mm/harness.cu} (log
 * {@code h100-harness-run1.log}, L2 evicted by a memset). The AUTO rules come from the second run (log
 * {@code h100-harness-run2.log}, kernels of commit 69a26a8, cuBLASLt 13.1, L2 evicted by a read of 4× its size
 * before every repetition as the Java benchmark does, medians of 40). "Rows" below name that log's rows as
 * {@code M/K/N/out}.
 */
public final class Int8MmHeuristics {
    /** Largest M the custom kernels take (tiles of 8 tokens, at most 8 tiles). */
    public static final int CUSTOM_MAX_M = 64;
    /** Threads per CTA of the skinny kernels (4 warps), as in skinny_mma.cu. */
    public static final int THREADS = 128;

    private Int8MmHeuristics() {}

    /**
     * How the custom kernel runs a shape: token tile (8, 16, 32, 64 → symbol suffix), channels per CTA,
     * k per iteration, split-K count and k range per split, dynamic shared memory and workspace bytes.
     */
    public record SkinnyPlan(int tokensTile, int blockN, int step, int tilesN, int splits, int ks, int smemBytes,
                             long workspaceBytes) {
        /** The kernel symbol for an output dtype, e.g. {@code int8_mm_skinny_m8_f16}. */
        public String symbol(DType out) {
            return "int8_mm_skinny_m" + tokensTile + "_" + out.name().toLowerCase(java.util.Locale.ROOT);
        }

        /** Bytes at the start of the workspace holding the per-tile counters (zeroed once per plan). */
        public long counterBytes() {
            return splits > 1 ? (long) ((tilesN + 63) / 64 * 64) * 4 : 0;
        }
    }

    /**
     * The custom kernel's launch plan for {@code [m, k] × [n, k]ᵀ}.
     *
     * <p>Split-K: the split count with the lowest estimated cost among those whose k range keeps A's slice
     * within {@link #smemBudget} (and at most {@link #MAX_EXTRA_SPLITS} more than the fewest such), where
     * cost = waves × (ks + {@link #WAVE_OVERHEAD_K}) + {@link #mergeCostK}(tile) × (splits − 1), waves =
     * ceil(tilesN · splits / (resident CTAs per SM × SMs)), and the resident CTAs come from the kernel's
     * registers and the slice's shared memory ({@link #ctasPerSm}). A second, nearly empty wave streams its
     * share of the weights with a fraction of the bytes in flight, so the k per CTA times the wave count is
     * the time; each extra split adds its partials to the last CTA's merge. Fitted to the H100 split sweeps
     * (every distinct split count of the shipped kernel timed over the sweep's six (K, N)):
     * {@code cuda-native/dev/int8_mm/h100-e0aa70b-split-sweep.txt} (M ∈ {1, 8, 16, 32}) and
     * {@code h100-13a499e-split-sweep.txt} (M ∈ {1, 8, 16, 32, 64}). On the second the chosen counts are within
     * 0.6 % of the fastest in geometric mean and 4 % at worst (8/8192/8192); one merge cost for every tile
     * (128 k) was 1.8 % and 16 % off there (M = 64: 4 splits for 64/4096/4096 at 26.8 µs where 8 take 23.2 µs).
     * The earlier rule (two CTAs per SM as the target) was 4.1 % and 27 % off on the first; e.g. M = 16,
     * K = 8192, N = 28672: 4 splits, 896 CTAs, 4 per SM (94.1 µs) instead of 2 splits of 66.5 KiB CTAs, 3 per
     * SM, one full wave and a second of 52 CTAs (119.5 µs). Worked example, H100 (132 SMs), M = 1,
     * K = N = 4096: 64 tiles of 64 channels; 4 splits of 1024 k, 256 CTAs in one wave of 5 per SM, cost
     * 1 × (1024 + 256) + 3 × 128 = 1664 (2 splits: 2048 + 256 + 128 = 2432; 8: 512 + 256 + 896 = 1664, not
     * lower, so the fewer splits stay).
     *
     * <p>Shared memory: A's slice [M, ks] (+64 bytes a row) stays under {@link #smemBudget}: 32 KiB for
     * M ≤ 8, 72 KiB above (row 8/8192/28672/i32 once ran 1 split with 66 KiB per CTA: 138.5 µs against
     * 100.0 µs with 3 splits).
     */
    public static SkinnyPlan skinnyPlan(long m, long n, long k, DeviceInfo info) {
        if (n < 1 || k < 1) {  // decide()'s own refusals, for a direct caller (the plan divides by k's steps)
            throw new ArgumentException(n < 1 ? "n" : "k", ">= 1", String.valueOf(n < 1 ? n : k));
        }
        if (info == null) {
            throw new ArgumentException("info", "the device's description", "null");
        }
        if (m < 1 || m > CUSTOM_MAX_M) {
            throw new UnsupportedShapeException("a", "m in [1, " + CUSTOM_MAX_M + "] for the custom int8 kernels", "m=" + m);
        }
        int tile = m <= 8 ? 8 : m <= 16 ? 16 : m <= 32 ? 32 : 64;
        int blockN = tile <= 16 ? 64 : 128;   // 4 warps × 16 channels × RT (1 for m8 and m16, 2 for m32 and m64)
        int step = tile <= 16 ? 256 : 128;    // 64 k × U (4 for m8 and m16, 2 for m32 and m64)
        int tilesN = (int) ((n + blockN - 1) / blockN);
        long ksMax = Math.max(step, (smemBudget(m) / m - 64) / step * step);
        long kSteps = (k + step - 1) / step;
        long sMin = Math.min(kSteps, (k + ksMax - 1) / ksMax);
        long sMax = Math.min(kSteps, sMin + MAX_EXTRA_SPLITS);
        long bestCost = Long.MAX_VALUE;
        long splits = sMin;
        long ks = 0;
        long lastSplits = -1;
        for (long s = sMin; s <= sMax; s++) {
            long ksS = ((k + s - 1) / s + step - 1) / step * step;
            long sp = (k + ksS - 1) / ksS;
            if (sp == lastSplits) {
                continue;  // the same k range as a smaller count
            }
            lastSplits = sp;
            int bps = ctasPerSm(tile, (int) (m * (ksS + 64)), info);
            long slots = (long) bps * info.smCount();
            long waves = ((long) tilesN * sp + slots - 1) / slots;
            long cost = waves * (ksS + WAVE_OVERHEAD_K) + mergeCostK(tile) * (sp - 1);
            if (cost < bestCost) {
                bestCost = cost;
                splits = sp;
                ks = ksS;
            }
        }
        int smem = (int) (m * (ks + 64));
        long ws = 0;
        if (splits > 1) {
            long counters = (long) ((tilesN + 63) / 64 * 64) * 4;
            long perSplit = 4L * (blockN / 64) * (tile / 8) * 32 * 16; // warps × RT × MT × lanes × int4
            ws = counters + (long) tilesN * splits * perSplit;
        }
        return new SkinnyPlan(tile, blockN, step, tilesN, (int) splits, (int) ks, smem, ws);
    }

    /** Split-K cost model (k units): the fixed time of a wave of CTAs. */
    static final long WAVE_OVERHEAD_K = 256;

    /**
     * Split-K cost model (k units): the merge's cost per extra split. A merge costs about the same time for every
     * tile, but a k of the 32- and 64-row tiles costs more than one of the 8-row tile (twice the MMAs per k or more),
     * so in k units their merge is cheaper: 128 for m8, 72 for m32 and m64 (the middle of the 64–80 range that fits
     * both H100 split sweeps best; see {@link #skinnyPlan}). m16 has m8's tile since the thirty-fifth session (64
     * channels, 256 k per iteration) and m8's 128: over the 24 rows of M ∈ {12, 16} of the H100 tile sweep
     * ({@code cuda-native/dev/int8_mm/h100-tile-sweep.txt}) the counts it picks with 128 took 1.009× (M = 16) and
     * 1.015× (M = 12) the time of the fastest count in geometric mean, with 72 1.017× and 1.028×.
     */
    static long mergeCostK(int tile) {
        return tile <= 16 ? 128 : 72;
    }

    /** How many split counts above the fewest that fit the shared-memory budget the plan considers. */
    static final int MAX_EXTRA_SPLITS = 32;

    /**
     * Registers per thread of the skinny kernels (ptxas, sm_90a, CUDA 13.0; the most of the four output types, since
     * c58a86e): m8 94, m16 96 (its tile since the thirty-fifth session, held to 5 CTAs per SM by its launch bounds; 104
     * before), m32 126, m64 168. (Before c58a86e m8 96 and m32 124: the same occupancy, since the hardware allocates
     * registers in steps of 8 per thread.) Devices before sm_90 run the sm_80 image, whose counts (ptxas, sm_80, CUDA 13.0,
     * forty-ninth session) are higher for the two tiles without a blocks-per-SM bound: m8 94, m16 96, m32 132, m64 182;
     * with the sm_90a counts the plans of an A100 or an RTX 30/40 had assumed one resident CTA more per SM at m32 and
     * m64 (4 and 3 where 3 and 2 fit) than the hardware keeps (a read-only review's finding).
     */
    static int skinnyRegisters(int tile, DeviceInfo info) {
        if (info.cc() >= 90) {
            return tile == 8 ? 94 : tile == 16 ? 96 : tile == 32 ? 126 : 168;
        }
        return tile == 8 ? 94 : tile == 16 ? 96 : tile == 32 ? 132 : 182;
    }

    /**
     * Resident CTAs per SM of a skinny kernel with {@code smemBytes} of dynamic shared memory ({@link Occupancy}): on
     * the H100 this matched the occupancy API on all 236 plans of the split sweep (5 for m8, 4 for m16/m32 while
     * shared memory allows; m16 has 5 since the thirty-fifth session, as the tile sweep's occupancy column shows).
     */
    static int ctasPerSm(int tile, int smemBytes, DeviceInfo info) {
        return Occupancy.blocksPerSm(THREADS, skinnyRegisters(tile, info), smemBytes, info);
    }

    /** Shared-memory budget per CTA for A's slice (see {@link #skinnyPlan}). */
    static long smemBudget(long m) {
        return m <= 8 ? 32 * 1024 : 72 * 1024;
    }

    /**
     * The largest K at which AUTO runs the custom kernel for 9 ≤ M ≤ 16 with a float output. Ten H100 int8 sweeps
     * (a35d849, 5db87f2, 01b7f8b twice, d68937c, ca6d8ea, 64bb3cb, 885a506, 6226dfb and db81ef8) at M = 16: custom took
     * 0.87–0.97× cuBLASLt's time at K ≤ 4096 (2048/5632, 4096/4096, 4096/14336, F16 and BF16; F32 at 25d64f2 0.87–0.94×)
     * and 1.002–1.046× at K ≥ 8192 (8192/8192, 8192/28672, 14336/4096: every run, both dtypes; F32 1.002–1.024×), the
     * slower path within 5 % but always the slower (an audit of AUTO's choices across the runs, forty-ninth session).
     * No sweep point lies between 4096 and 8192: the boundary is their midpoint.
     */
    static final long M16_FLOAT_CUSTOM_MAX_K = 6144;

    /**
     * The backend and variant for a problem on a CUDA device.
     *
     * <p>AUTO rules (H100 harness run 2; vendor = cuBLASLt int8 TN + the scaling pass for float outputs;
     * custom = the skinny kernel with {@link #skinnyPlan}). On that run AUTO is within 3.2 % of the faster
     * path at every one of its 144 rows (in-sample: the rules were checked against the same run).
     * <ul>
     *   <li>M ≤ 8: CUSTOM — 0.97–1.32× the vendor on the 68 rows it takes (e.g. 1/14336/4096/f16
     *   28.4 vs 37.3 µs; worst 8/8192/8192/i32 32.4 vs 31.4 µs, +3.2 %), except I32 output with
     *   K·N &lt; 16 Mi and 2 ≤ M ≤ 8, where the vendor's single kernel was faster or tied (rows 1,2,4,8/2048/5632/i32:
     *   custom 11.2/11.3/11.8/12.2 vs vendor 10.7/11.6/10.6/11.7 µs). M = 1 left that rule in the fortieth session:
     *   in the four int8 sweeps since (b315d4b, db81ef8, a35d849, 5db87f2, one H100 each) custom took 0.961, 1.023,
     *   0.953 and 0.952× cuBLASLt's time at 1/2048/5632/i32, so CUSTOM is at worst +2.3 % there (+4.7 % in run 2) where VENDOR was +5.1 %
     *   (AUTO's one miss at a35d849 and 5db87f2); at M = 4 the same sweeps give 0.980, 1.057, 0.977, 0.967×, where
     *   VENDOR's worst (+3.5 %) is the smaller, and at M = 2 and 8 cuBLASLt is ahead in three of four (worst +4.3 %
     *   at M = 2). And I32 output with 4 &lt; M ≤ 8 and
     *   K·N ≥ 64 Mi: the benchmark at 6d84317 (interleaved, L2 flushed) had custom at 1.075× the vendor's time at
     *   8/8192/8192 (31.5 vs 29.3 µs) and 1.049× at 8/8192/28672 (93.2 vs 88.8 µs), while at K·N = 56 Mi
     *   (8/4096/14336, 8/14336/4096) custom stayed ahead (0.98×, 0.90×) and at M = 4 within 2 % (4/8192/8192
     *   1.018×). The dequantized outputs keep CUSTOM there: the vendor's extra scaling pass costs more.</li>
     *   <li>9 ≤ M ≤ 16: CUSTOM for F16, BF16 and F32 outputs, VENDOR for I32 (since the thirty-fifth session, when m16
     *   took m8's tile). The int8 sweep at b315d4b (old m16 tile) had the vendor 0.94–1.04× custom's time on the float
     *   rows of M = 16 and 0.88–0.97× on the I32 rows; the H100 tile sweep ({@code cuda-native/dev/int8_mm/h100-tile-sweep.txt})
     *   timed the new tile at 0.90–1.00× the old one's time on the float rows at the plans this class makes, which
     *   puts the vendor at 0.97–1.14× custom there (its scaling pass is a second launch), and at 0.89–0.97× on I32,
     *   where cuBLASLt's one kernel stays ahead. Checked out of sample by the int8 sweep at db81ef8 (one H100): custom
     *   faster on 6 of the 12 float rows of M = 16 (up to 1.13×), cuBLASLt ahead by at most 4.2 % on the other 6 and by
     *   0.89–1.01× custom's time on I32; F32 outputs (bench --dtype F32 at 25d64f2) 0.98–1.16×; AUTO within 5 % on
     *   every row of both. Since the forty-ninth session VENDOR above K = {@link #M16_FLOAT_CUSTOM_MAX_K}, where custom
     *   was the slower path, by 0.2–4.6 %, in every one of ten sweeps.
     *   Before: VENDOR for every output (run 2 had the vendor ahead at 16/14336/4096/i32 and 16/8192/8192/i32, custom
     *   ahead by at most 3.1 %).</li>
     *   <li>M ≥ 17: VENDOR (custom 0.79× at M = 32 and 0.57× at M = 64 in geometric mean over run 2's I32
     *   rows; the experimental stream kernel of {@code cuda-native/dev/int8_mm/} was slower still).</li>
     * </ul>
     *
     * @param requested AUTO, VENDOR or CUSTOM (after {@link Backend#resolve})
     * @throws UnsupportedShapeException CUSTOM with M &gt; 64 or a GPU older than sm_80
     * @throws ArgumentException         REFERENCE (the CPU backend is chosen by the tensors' device, not here), m or n below 1,
     *                                   k not a multiple of 16 in [16, {@link Int8Mm#MAX_K}], a null info
     */
    public static Decision decide(long m, long n, long k, DType out, DeviceInfo info, Backend requested) {
        // the shape a valid call can have (Int8Mm validates its tensors the same way): the plans divide by k's steps
        if (m < 1 || n < 1) {
            throw new ArgumentException(m < 1 ? "m" : "n", ">= 1", String.valueOf(m < 1 ? m : n));
        }
        if (k < 16 || k % 16 != 0 || k > Int8Mm.MAX_K) {
            throw new ArgumentException("k", "a multiple of 16 in [16, " + Int8Mm.MAX_K + "]", String.valueOf(k));
        }
        if (info == null) {
            throw new ArgumentException("info", "the device's description", "null");
        }
        if (out == null || !Int8Mm.OUT_DTYPES.contains(out)) {  // as Int8Mm.Options validates it
            throw new ArgumentException("out", "an output dtype in " + Int8Mm.OUT_DTYPES, String.valueOf(out));
        }
        if (requested == Backend.REFERENCE) {
            throw new ArgumentException("backend", "AUTO, VENDOR or CUSTOM for tensors on a GPU (CPU tensors always run the reference)",
                    "REFERENCE");
        }
        String vendorVariant = out == DType.I32 ? "cublaslt_int8_tn" : "cublaslt_int8_tn+dequant_" + out.name().toLowerCase(java.util.Locale.ROOT);
        if (requested == Backend.VENDOR) {
            return new Decision(Backend.VENDOR, vendorVariant, "forced by the caller");
        }
        if (requested == Backend.CUSTOM) {
            if (info.cc() < 80) {
                throw new UnsupportedShapeException("backend", "a GPU of compute capability 8.0 or newer for the int8 mma kernels",
                        "sm_" + info.cc());
            }
            SkinnyPlan p = skinnyPlan(m, n, k, info);
            return new Decision(Backend.CUSTOM, variant(p), "forced by the caller");
        }
        if (requested != Backend.AUTO) {
            throw new ArgumentException("backend", "AUTO, VENDOR or CUSTOM", String.valueOf(requested));
        }
        if (info.cc() < 80 || m > 16) {
            return new Decision(Backend.VENDOR, vendorVariant, m > 16
                    ? "M=" + m + " > 16: cuBLASLt faster at M=32 (custom 0.79x) and M=64 (0.57x) on H100 harness run 2"
                    : "no int8 mma below sm_80");
        }
        long kn = k * n;
        SkinnyPlan p = skinnyPlan(m, n, k, info);
        if (m <= 8) {
            if (out == DType.I32 && kn < (16L << 20) && m > 1) {
                return new Decision(Backend.VENDOR, vendorVariant,
                        "2<=M<=8, I32, K*N<16Mi: cuBLASLt faster or tied on rows M/2048/5632/i32 (H100 harness run 2;"
                                + " at M=2, 4, 8 at most 4.3% slower than custom in the int8 sweeps b315d4b, db81ef8, a35d849 and 5db87f2)");
            }
            if (out == DType.I32 && m > 4 && kn >= (64L << 20)) {
                return new Decision(Backend.VENDOR, vendorVariant,
                        "4<M<=8, I32, K*N>=64Mi: cuBLASLt faster at 8/8192/8192 (custom 1.075x its time) and 8/8192/28672 (1.049x),"
                                + " H100 benchmark at 6d84317");
            }
            return new Decision(Backend.CUSTOM, variant(p), m == 1 && out == DType.I32 && kn < (16L << 20)
                    ? "M=1, I32, K*N<16Mi: custom 0.95-1.02x cuBLASLt's time at 1/2048/5632 (H100 int8 sweeps b315d4b-5db87f2)"
                    : "M<=8, K*N>=16Mi or float output: custom 0.97-1.32x cuBLASLt (H100 harness run 2)");
        }
        if (out == DType.I32) {
            return new Decision(Backend.VENDOR, vendorVariant,
                    "9<=M<=16, I32: cuBLASLt's one kernel 0.89-1.01x custom's time at M=16 (H100 int8 sweep at db81ef8)");
        }
        if (k > M16_FLOAT_CUSTOM_MAX_K) {
            return new Decision(Backend.VENDOR, vendorVariant,
                    "9<=M<=16, float output, K>" + M16_FLOAT_CUSTOM_MAX_K + ": custom 1.002-1.046x cuBLASLt's time at M=16, K>=8192"
                            + " in every one of ten H100 int8 sweeps (a35d849 to 6226dfb)");
        }
        return new Decision(Backend.CUSTOM, variant(p),
                "9<=M<=16, float output, K<=" + M16_FLOAT_CUSTOM_MAX_K + ": custom 0.87-1.00x cuBLASLt's time (the vendor's scaling"
                        + " pass is a second launch) at M=16, K<=4096 in ten H100 int8 sweeps (a35d849 to 6226dfb)");
    }

    private static String variant(SkinnyPlan p) {
        return "skinny_m" + p.tokensTile() + "_splitk" + p.splits();
    }
}
